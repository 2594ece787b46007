import { StepwiseError } from './stepwise-error.js';
import type { StepwiseErrorOptions } from './stepwise-error.js';

export class RateLimitedError extends StepwiseError {
  constructor(message: string, retryAfterMs: number, options: Omit<StepwiseErrorOptions, 'retryAfterMs'> = {}) {
    super('rate_limited', 'rate_limited', message, { ...options, retryAfterMs });
  }
}
