import { StepwiseError } from './stepwise-error.js';

/** The same explicit idempotency key was reused with a different request (Stripe's rule). */
export class IdempotencyConflictError extends StepwiseError {
  constructor(idempotencyKey: string, existingJobId: string) {
    super(
      'idempotency_conflict',
      'conflict',
      `Idempotency key "${idempotencyKey}" was already used for job ${existingJobId} with a different type or input. ` +
        'Use a new key for a new request, or resend the original input to get the original job back.',
      { details: { idempotencyKey, existingJobId } },
    );
  }
}
