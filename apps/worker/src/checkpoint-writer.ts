import type {
  Checkpoint,
  Db,
  Fence,
  FinishArgs,
  Job,
  JobUpdateBus,
  Logger,
  ProgressValue,
  StepIdentity,
  TenantId,
  WorkerId,
} from '@stepwise/shared';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  finishJob,
  getJobForWorker,
  isTransientInfrastructureError,
  LeaseLostError,
  renewLease,
  writeCheckpoint,
  writeCursor,
  writeIntent,
  writeProgress,
} from '@stepwise/shared';

/**
 * The one module through which a worker writes a held job: intents, checkpoints, progress,
 * cursors, lease renewals and the final status. All are fenced. Keeping them here means batching
 * or reordering writes later touches one file. After each write the job's subscribers are told
 * through Redis (best effort: Postgres already has the truth).
 */
export class CheckpointWriter {
  /** Set once any write reports `cancel_requested_at`. */
  cancelRequested = false;
  #progressChain: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly bus: JobUpdateBus,
    private readonly fence: Fence,
    private readonly tenantId: TenantId,
    private readonly workerId: WorkerId,
    private readonly log: Logger,
  ) {}

  /**
   * Runs a fenced write, retrying while Postgres is unreachable (a restart, a failover) for about
   * 15 s. Every fenced write is safe to repeat: the upserts converge, and a repeated status change
   * is recognised by `finish`. LeaseLostError is never retried.
   */
  async #write<T>(what: string, op: () => Promise<T>): Promise<T> {
    const delays = [250, 500, 1000, 2000, 4000, 8000];
    for (let i = 0; ; i++) {
      try {
        return await op();
      } catch (e: unknown) {
        const delay = delays[i];
        if (e instanceof LeaseLostError || !isTransientInfrastructureError(e) || delay === undefined) throw e;
        this.log.warn({ err: e, write: what, retryInMs: delay }, 'fenced write failed; retrying');
        await sleep(delay);
      }
    }
  }

  #seen(ack: { cancelRequestedAt: Date | null }): void {
    if (ack.cancelRequestedAt) this.cancelRequested = true;
  }

  #publish(status: Job['status'], progress: ProgressValue | null, overall: number | null): void {
    this.bus
      .publishUpdate(this.tenantId, { jobId: this.fence.jobId, status, progress, overall, at: Date.now() })
      .catch((e: unknown) => this.log.warn({ err: e }, 'job update publish failed'));
  }

  async intent(step: StepIdentity): Promise<void> {
    this.#seen(await this.#write('intent', () => writeIntent(this.db, this.fence, step)));
  }

  async checkpoint(c: Checkpoint): Promise<void> {
    await this.#progressChain;
    this.#seen(await this.#write('checkpoint', () => writeCheckpoint(this.db, this.fence, c)));
    this.#publish('running', c.progress, c.progress.total ? c.stepsDone / c.progress.total : null);
  }

  /** Progress writes are serialized so a slow write never lands after a newer one. */
  /** `overall` is the whole job's completion (0..1), published for live progress bars. */
  progress(p: ProgressValue, overall: number | null): Promise<void> {
    this.#progressChain = this.#progressChain
      .then(async () => {
        this.#seen(await writeProgress(this.db, this.fence, p));
        this.#publish('running', p, overall);
      })
      .catch((e: unknown) => {
        this.log.warn({ err: e }, 'progress write failed');
      });
    return this.#progressChain;
  }

  async cursor(stepName: string, cursor: unknown): Promise<void> {
    this.#seen(await this.#write('cursor', () => writeCursor(this.db, this.fence, stepName, cursor)));
  }

  async renew(leaseMs: number): Promise<void> {
    this.#seen(await renewLease(this.db, this.fence, leaseMs));
  }

  async finish(args: Omit<FinishArgs, 'workerId'>): Promise<Job> {
    await this.#progressChain;
    let ambiguous = false;
    const job = await this.#write('finish', async () => {
      try {
        return await finishJob(this.db, this.fence, { ...args, workerId: this.workerId });
      } catch (e: unknown) {
        // A commit whose reply was lost looks like a failure; the retry then finds the job already
        // moved by us (same fence, target status) and must not mistake that for a lost lease.
        if (e instanceof LeaseLostError && ambiguous) {
          const now = await getJobForWorker(this.db, this.fence.jobId);
          if (now && now.leaseFence === this.fence.fence && now.status === args.to) return now;
        }
        if (isTransientInfrastructureError(e)) ambiguous = true;
        throw e;
      }
    });
    const progress = job.progress ? { done: job.progress.done, total: job.progress.total, message: job.progress.message } : null;
    this.#publish(job.status, progress, job.status === 'succeeded' ? 1 : null);
    return job;
  }
}
