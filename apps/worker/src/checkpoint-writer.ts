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
import { finishJob, renewLease, writeCheckpoint, writeCursor, writeIntent, writeProgress } from '@stepwise/shared';

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

  #seen(ack: { cancelRequestedAt: Date | null }): void {
    if (ack.cancelRequestedAt) this.cancelRequested = true;
  }

  #publish(status: Job['status'], progress: ProgressValue | null, overall: number | null): void {
    this.bus
      .publishUpdate(this.tenantId, { jobId: this.fence.jobId, status, progress, overall, at: Date.now() })
      .catch((e: unknown) => this.log.warn({ err: e }, 'job update publish failed'));
  }

  async intent(step: StepIdentity): Promise<void> {
    this.#seen(await writeIntent(this.db, this.fence, step));
  }

  async checkpoint(c: Checkpoint): Promise<void> {
    await this.#progressChain;
    this.#seen(await writeCheckpoint(this.db, this.fence, c));
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
    this.#seen(await writeCursor(this.db, this.fence, stepName, cursor));
  }

  async renew(leaseMs: number): Promise<void> {
    this.#seen(await renewLease(this.db, this.fence, leaseMs));
  }

  async finish(args: Omit<FinishArgs, 'workerId'>): Promise<Job> {
    await this.#progressChain;
    const job = await finishJob(this.db, this.fence, { ...args, workerId: this.workerId });
    const progress = job.progress ? { done: job.progress.done, total: job.progress.total, message: job.progress.message } : null;
    this.#publish(job.status, progress, job.status === 'succeeded' ? 1 : null);
    return job;
  }
}
