import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobId, TenantId } from '../ids.js';

export const QUEUE_NAME = 'stepwise-jobs';

/** The BullMQ payload. Deliberately tiny: Postgres holds the job, Redis only says "look at it". */
export interface DispatchData {
  jobId: JobId;
  tenantId: TenantId;
}

export function createJobQueue(connection: Redis, prefix: string): Queue<DispatchData> {
  return new Queue<DispatchData>(QUEUE_NAME, {
    connection,
    prefix,
    defaultJobOptions: {
      // Our retries are decided in Postgres (retry-policy), never by BullMQ re-running blindly.
      attempts: 1,
      // Removing finished entries frees the jobId (the idempotency hash) so the sweeper can
      // re-enqueue the same job later without BullMQ silently ignoring the add.
      removeOnComplete: true,
      removeOnFail: true,
    },
  });
}

/**
 * Enqueues a job under its idempotency hash. BullMQ ignores an add whose jobId exists, so a
 * retried start_job or a sweeper re-enqueue never creates a second queue entry.
 */
export async function enqueueJob(queue: Queue<DispatchData>, dispatchId: string, data: DispatchData, delayMs = 0): Promise<void> {
  await queue.add('run', data, { jobId: dispatchId, ...(delayMs > 0 ? { delay: delayMs } : {}) });
}
