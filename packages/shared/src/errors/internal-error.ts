import { StepwiseError } from './stepwise-error.js';
import type { StepwiseErrorOptions } from './stepwise-error.js';

/** A bug or broken invariant on our side. Not retryable by the caller; an operator must look. */
export class InternalError extends StepwiseError {
  constructor(message: string, options: StepwiseErrorOptions = {}) {
    super('internal', 'internal', message, options);
  }
}
