import type { Queue } from 'bullmq';
import type { Db, DbHandle, DispatchData, Logger } from '@stepwise/shared';
import { endOverdueJobs, enqueueJob, expireJobs, findDispatchCandidates, purgeCheckpoints, purgeJobs, StepwiseError } from '@stepwise/shared';
import { deadlineError } from './step-runner.js';

// Any constant shared by all workers; distinct from the migration lock.
const SWEEPER_LOCK_ID = 0x5757_0002;

// Queue states in which the entry will reach a worker by itself.
const LIVE_STATES = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

export interface SweeperOptions {
  intervalMs: number;
  /** Jobs younger than this are left alone: their enqueue may still be in flight. */
  minAgeMs: number;
  /** Finished jobs are deleted (leaving a tombstone) after this long. */
  retentionMs: number;
  /** Checkpoints of finished jobs are deleted after this long. */
  checkpointRetentionMs: number;
  batch: number;
  /** What an approval nobody answered in time ends as (default cancelled). */
  waitExpiredTo?: 'cancelled' | 'failed';
}

export interface SweepReport {
  redispatched: number;
  expired: number;
  overdue: number;
  checkpointsPurged: number;
  jobsPurged: number;
}

/**
 * Repairs dispatch from Postgres, the source of truth (DESIGN §1, §4): any job a worker should be
 * able to pick up but that has no live queue entry (Redis flushed or restarted, a server that died
 * between commit and enqueue, a dispatch dropped by a bug) is enqueued again under its dispatch id.
 * Also expires jobs past their TTL and applies retention. Every worker runs one; a transaction-level
 * advisory lock lets only one sweep at a time.
 */
export class Sweeper {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly sql: DbHandle['sql'],
    private readonly queue: Queue<DispatchData>,
    private readonly options: SweeperOptions,
    private readonly log: Logger,
  ) {}

  start(): void {
    const tick = () => {
      this.#running = this.sweepOnce()
        .catch((e: unknown) => this.log.warn({ err: e }, 'sweep failed; will retry'))
        .finally(() => {
          if (this.#timer !== undefined) this.#timer = setTimeout(tick, this.options.intervalMs);
        });
    };
    this.#timer = setTimeout(tick, Math.floor(Math.random() * this.options.intervalMs));
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One sweep, or null when another worker holds the sweeper lock. */
  async sweepOnce(): Promise<SweepReport | null> {
    return this.sql.begin(async (tx) => {
      const [row] = await tx<{ got: boolean }[]>`select pg_try_advisory_xact_lock(${SWEEPER_LOCK_ID}) as got`;
      if (!row?.got) return null;
      const report = await this.#sweep();
      if (Object.values(report).some((n) => n > 0)) this.log.info(report, 'sweep repaired or cleaned jobs');
      return report;
    });
  }

  async #sweep(): Promise<SweepReport> {
    const now = Date.now();
    let redispatched = 0;
    for (const c of await findDispatchCandidates(this.db, this.options.minAgeMs, this.options.batch)) {
      const state = await this.queue.getJobState(c.dispatchId);
      if (LIVE_STATES.has(state)) continue;
      if (state === 'completed' || state === 'failed') await this.queue.remove(c.dispatchId).catch(() => 0);
      const delayMs = c.dueAt ? Math.max(0, c.dueAt.getTime() - now) : 0;
      await enqueueJob(this.queue, c.dispatchId, { jobId: c.jobId, tenantId: c.tenantId }, delayMs);
      redispatched++;
      this.log.info({ jobId: c.jobId, status: c.status, queueState: state }, 're-dispatched job missing from the queue');
    }
    const expired = await expireJobs(
      this.db,
      new StepwiseError('job_expired', 'timeout', 'The job did not finish within its time to live and was stopped.', {
        retryable: false,
      }).toInfo(),
      this.options.batch,
    );
    const overdue = await endOverdueJobs(this.db, {
      waitExpiredTo: this.options.waitExpiredTo ?? 'cancelled',
      waitError: new StepwiseError('approval_expired', 'cancelled', 'Nobody answered the approval request in time.', { retryable: false }).toInfo(),
      deadlineError: deadlineError('fail').toInfo(),
      limit: this.options.batch,
    });
    const checkpointsPurged = await purgeCheckpoints(this.db, new Date(now - this.options.checkpointRetentionMs), this.options.batch * 10);
    const jobsPurged = await purgeJobs(this.db, new Date(now - this.options.retentionMs), this.options.batch);
    return { redispatched, expired: expired.length, overdue: overdue.length, checkpointsPurged, jobsPurged };
  }
}
