import { StepwiseError } from './stepwise-error.js';
import type { StepwiseErrorOptions } from './stepwise-error.js';

/** A passing failure (network, a dependency restarting): the same call may well succeed later. */
export class TransientError extends StepwiseError {
  constructor(message: string, options: StepwiseErrorOptions = {}, code = 'transient') {
    super(code, 'transient', message, options);
  }
}

/** Postgres or Redis could not be reached or answered with a retryable failure. */
export class ServiceUnavailableError extends TransientError {
  constructor(service: 'postgres' | 'redis', cause: unknown) {
    super(`${service === 'postgres' ? 'The job store (Postgres)' : 'The queue (Redis)'} is unavailable right now; nothing was changed. Retry shortly.`, {
      cause,
      retryAfterMs: 1000,
      details: { service },
    }, `${service}_unavailable`);
  }
}
