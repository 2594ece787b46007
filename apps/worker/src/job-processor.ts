import { DelayedError } from 'bullmq';
import type { Job as BullJob } from 'bullmq';
import type { Db, DispatchData, JobId, Logger, WorkerId } from '@stepwise/shared';
import { claimJob, getJobForWorker, isTransientInfrastructureError, JobIdSchema } from '@stepwise/shared';
import type { StepRunner } from './step-runner.js';
import { WorkerShutdown } from './worker-shutdown.js';

/**
 * The BullMQ processor: turns a dispatch ("look at job X") into a claim and a run. Postgres
 * decides whether there is anything to do; a stale or duplicate delivery is simply acknowledged.
 */
export class JobProcessor {
  /** Running jobs by id, so cancel notices and shutdown can reach their AbortControllers. */
  readonly active = new Map<JobId, AbortController>();

  constructor(
    private readonly db: Db,
    private readonly runner: StepRunner,
    private readonly workerId: WorkerId,
    private readonly leaseMs: number,
    private readonly log: Logger,
    /** Per-tenant cap on running jobs (0 = none); see claimJob. */
    private readonly tenantMaxRunning = 0,
  ) {}

  readonly process = async (bullJob: BullJob<DispatchData>, token?: string): Promise<string> => {
    try {
      return await this.#process(bullJob, token);
    } catch (e: unknown) {
      // Postgres unreachable: keep the queue entry and look again shortly (DESIGN §4: workers back
      // off and keep their BullMQ job). Anything else is a bug and surfaces as a failed dispatch;
      // the job row is untouched, so the sweeper re-dispatches it.
      if (!(e instanceof DelayedError) && isTransientInfrastructureError(e)) {
        this.log.warn({ err: e, jobId: bullJob.data.jobId }, 'store unavailable; dispatch delayed');
        await this.#delay(bullJob, token, 2000);
      }
      throw e;
    }
  };

  async #process(bullJob: BullJob<DispatchData>, token?: string): Promise<string> {
    const parsed = JobIdSchema.safeParse(bullJob.data.jobId);
    if (!parsed.success) {
      this.log.error({ data: bullJob.data }, 'dropped malformed dispatch');
      return 'malformed';
    }
    const jobId = parsed.data;
    const claimed = await claimJob(this.db, { jobId, workerId: this.workerId, leaseMs: this.leaseMs, tenantMaxRunning: this.tenantMaxRunning });
    if (!claimed) {
      const job = await getJobForWorker(this.db, jobId);
      if (job?.status === 'running' && job.leaseExpiresAt && job.leaseExpiresAt.getTime() > Date.now()) {
        // Another worker holds a live lease (e.g. BullMQ redelivered after a stall). Look again
        // when that lease would expire, so the job is never stranded if that worker died.
        await this.#delay(bullJob, token, job.leaseExpiresAt.getTime() - Date.now() + 250);
      }
      if (job?.status === 'pending' || job?.status === 'retrying') {
        // Claimable but refused: its tenant is at its running cap. Step aside for other tenants'
        // jobs and look again shortly (jitter spreads the retries).
        await this.#delay(bullJob, token, 300 + Math.floor(Math.random() * 700));
      }
      return `skipped:${job?.status ?? 'unknown'}`;
    }

    const controller = new AbortController();
    this.active.set(jobId, controller);
    try {
      const outcome = await this.runner.run(claimed, controller);
      switch (outcome.kind) {
        case 'finished':
          return outcome.job.status;
        case 'retry':
          await this.#delay(bullJob, token, outcome.delayMs);
          return 'retrying';
        case 'released':
          await this.#delay(bullJob, token, 0);
          return 'released';
        case 'lease_lost':
          return 'lease_lost';
      }
    } finally {
      this.active.delete(jobId);
    }
  }

  /** Keeps the same BullMQ entry (and jobId) and has it delivered again after `delayMs`. */
  async #delay(bullJob: BullJob<DispatchData>, token: string | undefined, delayMs: number): Promise<never> {
    await bullJob.moveToDelayed(Date.now() + Math.max(0, delayMs), token);
    throw new DelayedError();
  }

  cancel(jobId: string, reason: Error): boolean {
    const c = this.active.get(jobId as JobId);
    if (!c) return false;
    c.abort(reason);
    return true;
  }

  shutdownAll(): void {
    for (const c of this.active.values()) c.abort(new WorkerShutdown());
  }
}
