import { StepwiseError } from './stepwise-error.js';

/** The job was cancelled while this code ran; thrown from `signal.throwIfAborted()` paths. */
export class CancelledError extends StepwiseError {
  constructor(reason = 'The job was cancelled.') {
    super('cancelled', 'cancelled', reason);
  }
}
