import { StepwiseError } from './stepwise-error.js';
import type { StepwiseErrorOptions } from './stepwise-error.js';

/** The request contradicts the current state (e.g. retrying a job that has not failed). */
export class ConflictError extends StepwiseError {
  constructor(code: string, message: string, options: StepwiseErrorOptions = {}) {
    super(code, 'conflict', message, options);
  }
}
