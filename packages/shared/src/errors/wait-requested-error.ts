import type { ErrorCategory } from './error-category.js';
import { StepwiseError } from './stepwise-error.js';

/**
 * Thrown by a step that cannot go on until a person acts (a downstream tool changed its schema or
 * disappeared, an interrupted call needs confirming). The runner does not retry it: the job moves
 * to `waiting` with `reason` as its waiting reason and `details` as its waiting details, and the
 * step's attempt is recorded as failed. `respond_to_job` ends the wait.
 */
export class WaitRequestedError extends StepwiseError {
  /** The waiting reason, e.g. `schema_changed`: short, snake_case, shown to the assistant. */
  readonly reason: string;

  constructor(reason: string, category: ErrorCategory, message: string, options: { details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(reason, category, message, { ...options, retryable: false });
    this.reason = reason;
  }
}
