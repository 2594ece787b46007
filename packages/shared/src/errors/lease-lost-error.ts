import { StepwiseError } from './stepwise-error.js';

/**
 * A fenced write matched no row: another worker took the job over (this one stalled, or its
 * lease expired). The holder of this error must stop the job at once and write nothing more.
 */
export class LeaseLostError extends StepwiseError {
  constructor(jobId: string, fence: number) {
    super('lease_lost', 'conflict', `Worker lost the lease on ${jobId} (fence ${fence}); another worker owns it now.`, {
      retryable: false,
      details: { jobId, fence },
    });
  }
}
