import { StepwiseError } from './stepwise-error.js';

/**
 * No job with this id is visible to the caller. A job of another tenant raises exactly this too,
 * so an id's existence never leaks across tenants.
 */
export class JobNotFoundError extends StepwiseError {
  constructor(jobId: string) {
    super('job_not_found', 'not_found', `No job ${jobId} exists for this caller. Check the id, or use list_jobs.`, {
      details: { jobId },
    });
  }
}
