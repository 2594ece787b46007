import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Worker } from 'bullmq';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  claimJob,
  createDb,
  createJob,
  createJobQueue,
  createLogger,
  createRedis,
  enqueueJob,
  finishJob,
  idempotencyHash,
  newJobId,
  QUEUE_NAME,
  requestHash,
  writeIntent,
} from '@stepwise/shared';
import type { DispatchData, Job, JobId, PrincipalId, TenantId, WorkerId } from '@stepwise/shared';
import { createTestDatabase, uniquePrefix } from '@stepwise/testing';
import type { TestDatabase } from '@stepwise/testing';
import { Sweeper } from './sweeper.js';
import type { SweepReport, SweeperOptions } from './sweeper.js';

// The real Sweeper against a real Postgres and a real BullMQ queue (DESIGN §1, §4): it repairs
// dispatch from Postgres, the source of truth. Every test gets its own database and queue prefix,
// because a sweep looks at every job in the database and every entry in the queue.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
// Must match SWEEPER_LOCK_ID in sweeper.ts (0x5757_0002).
const SWEEPER_LOCK_ID = 0x5757_0002;
const TENANT = 'acme' as TenantId;
const W1 = 'wrk_sweep_1_aaaa' as WorkerId;
const DAY = 24 * 3600_000;
// Options newer Sweepers take (what an unanswered approval ends as); spread from a variable so
// this file compiles whether or not SweeperOptions declares them yet.
const NEWER_OPTIONS = { waitExpiredTo: 'failed' as const };
const OPTIONS: SweeperOptions = { intervalMs: 60_000, minAgeMs: 5_000, retentionMs: 30 * DAY, checkpointRetentionMs: 7 * DAY, batch: 100, ...NEWER_OPTIONS };
const log = createLogger({ name: 'sweeper-test', level: 'silent' });

interface Env {
  tdb: TestDatabase;
  prefix: string;
  queue: Queue<DispatchData>;
  sweeper(options?: Partial<SweeperOptions>): Sweeper;
}

let cleanups: (() => Promise<unknown>)[] = [];
let env: Env;

function ready(r: Redis): Promise<void> {
  return r.status === 'ready'
    ? Promise.resolve()
    : new Promise((resolve, reject) => {
        r.once('ready', () => resolve());
        r.once('error', reject);
      });
}

async function newQueue(prefix: string): Promise<Queue<DispatchData>> {
  const conn = createRedis(REDIS_URL, { name: 'sweeper-test-queue' });
  cleanups.push(() => conn.quit());
  await ready(conn);
  const queue = createJobQueue(conn, prefix);
  cleanups.push(() => queue.close());
  await queue.waitUntilReady();
  return queue;
}

beforeEach(async () => {
  const tdb = await createTestDatabase('sweeper');
  const prefix = uniquePrefix('sweeper');
  cleanups.push(() => tdb.drop());
  const queue = await newQueue(prefix);
  // Runs before the queue is closed (cleanups run in reverse order).
  cleanups.push(() => queue.obliterate({ force: true }).catch(() => undefined));
  env = {
    tdb,
    prefix,
    queue,
    sweeper: (options = {}) => new Sweeper(tdb.db, tdb.sql, queue, { ...OPTIONS, ...options }, log),
  };
});

afterEach(async () => {
  const list = cleanups.reverse();
  cleanups = [];
  for (const c of list) await c();
});

let seq = 0;
async function newPendingJob(): Promise<Job> {
  const input = { steps: 2, n: seq++ };
  const { job } = await createJob(
    env.tdb.db,
    {
      id: newJobId(),
      tenantId: TENANT,
      principalId: 'alice' as PrincipalId,
      type: 'demo.steps',
      input,
      idempotencyKey: undefined,
      idempotencyHash: idempotencyHash(TENANT, 'demo.steps', input),
      requestHash: requestHash('demo.steps', input),
      dedupWindowMs: DAY,
      plan: [
        { name: 'step-001', effect: 'none' },
        { name: 'step-002', effect: 'none' },
      ],
      maxAttempts: 3,
      traceId: undefined,
    },
    { tenantId: TENANT, principalId: 'alice', action: 'start_job', outcome: 'success' },
  );
  return job;
}

async function claim(job: Job): Promise<Job> {
  const claimed = await claimJob(env.tdb.db, { jobId: job.id, workerId: W1, leaseMs: 60_000 });
  if (!claimed) throw new Error('claim failed');
  return claimed.job;
}

/** Makes a job look untouched for an hour: older than any minAgeMs used here. */
async function age(jobId: JobId): Promise<void> {
  await env.tdb.sql`update jobs set updated_at = now() - interval '1 hour' where id = ${jobId}`;
}

/** The report matches `expected`, and every counter it does not name is zero. */
function expectReport(report: SweepReport | null, expected: Partial<SweepReport>): void {
  expect(report).not.toBeNull();
  const counters: Record<string, number> = { ...report };
  for (const [k, n] of Object.entries(counters)) expect({ [k]: n }).toEqual({ [k]: (expected as Record<string, number>)[k] ?? 0 });
  for (const k of Object.keys(expected)) expect(counters).toHaveProperty(k);
}

async function stateOf(dispatchId: string): Promise<string> {
  return env.queue.getJobState(dispatchId);
}

async function entryCount(): Promise<number> {
  const counts = await env.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized', 'waiting-children', 'completed', 'failed');
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

describe('Sweeper.sweepOnce: re-dispatch', () => {
  it('enqueues a pending job with no queue entry under its dispatch id', async () => {
    const job = await newPendingJob();
    await age(job.id);
    expect(await stateOf(job.dispatchId)).toBe('unknown');

    expectReport(await env.sweeper().sweepOnce(), { redispatched: 1 });

    expect(await stateOf(job.dispatchId)).toBe('waiting');
    const entry = await env.queue.getJob(job.dispatchId);
    expect(entry?.id).toBe(job.dispatchId);
    expect(entry?.data).toEqual({ jobId: job.id, tenantId: TENANT });
    expect(await entryCount()).toBe(1);

    // The next sweep sees the live entry and adds nothing.
    expectReport(await env.sweeper().sweepOnce(), { redispatched: 0 });
    expect(await entryCount()).toBe(1);
  });

  it('leaves a job younger than minAgeMs alone: its enqueue may still be in flight', async () => {
    const fresh = await newPendingJob();
    expectReport(await env.sweeper().sweepOnce(), { redispatched: 0 });
    expect(await stateOf(fresh.dispatchId)).toBe('unknown');
    // With no minimum age it is picked up.
    expectReport(await env.sweeper({ minAgeMs: 0 }).sweepOnce(), { redispatched: 1 });
    expect(await stateOf(fresh.dispatchId)).toBe('waiting');
  });

  it('does not touch a job whose queue entry exists', async () => {
    const waiting = await newPendingJob();
    const delayed = await newPendingJob();
    await enqueueJob(env.queue, waiting.dispatchId, { jobId: waiting.id, tenantId: TENANT });
    await enqueueJob(env.queue, delayed.dispatchId, { jobId: delayed.id, tenantId: TENANT }, 120_000);
    await age(waiting.id);
    await age(delayed.id);
    const view = async (j: Job) => {
      const e = await env.queue.getJob(j.dispatchId);
      return { id: e?.id, data: e?.data, timestamp: e?.timestamp, delay: e?.delay, attemptsMade: e?.attemptsMade };
    };
    const before = await Promise.all([waiting, delayed].map(view));

    expectReport(await env.sweeper().sweepOnce(), { redispatched: 0 });

    expect(await stateOf(waiting.dispatchId)).toBe('waiting');
    expect(await stateOf(delayed.dispatchId)).toBe('delayed');
    const after = await Promise.all([waiting, delayed].map(view));
    expect(after).toEqual(before);
    expect(await entryCount()).toBe(2);
  });

  it('enqueues a retrying job delayed until next_run_at', async () => {
    const job = await claim(await newPendingJob());
    const nextRunAt = new Date(Date.now() + 30_000);
    await finishJob(env.tdb.db, { jobId: job.id, fence: job.leaseFence }, {
      to: 'retrying',
      workerId: W1,
      reason: 'transient',
      error: { code: 'boom', category: 'transient', retryable: true, message: 'boom' },
      nextRunAt,
      nextAttempt: 2,
    });
    await age(job.id);

    const before = Date.now();
    expectReport(await env.sweeper().sweepOnce(), { redispatched: 1 });
    expect(await stateOf(job.dispatchId)).toBe('delayed');
    const entry = await env.queue.getJob(job.dispatchId);
    expect(entry?.data).toEqual({ jobId: job.id, tenantId: TENANT });
    // Due at next_run_at, give or take the time the sweep took.
    const dueAt = (entry?.timestamp ?? 0) + (entry?.delay ?? 0);
    expect(dueAt).toBeGreaterThanOrEqual(nextRunAt.getTime() - 1_000);
    expect(dueAt).toBeLessThanOrEqual(nextRunAt.getTime() + 1_000);
    expect(entry?.delay).toBeGreaterThan(25_000);
    expect(entry?.delay).toBeLessThanOrEqual(30_000 + (Date.now() - before));
  });

  it('enqueues a retrying job that is already due without delay', async () => {
    const job = await claim(await newPendingJob());
    await finishJob(env.tdb.db, { jobId: job.id, fence: job.leaseFence }, {
      to: 'retrying',
      workerId: W1,
      reason: 'transient',
      nextRunAt: new Date(Date.now() - 10_000),
      nextAttempt: 2,
    });
    await age(job.id);
    expectReport(await env.sweeper().sweepOnce(), { redispatched: 1 });
    expect(await stateOf(job.dispatchId)).toBe('waiting');
  });

  it('enqueues a running job whose lease expired and a waiting job with a decision; not a live lease, an undecided wait, or a finished job', async () => {
    const expired = await claim(await newPendingJob());
    await env.tdb.sql`update jobs set lease_expires_at = now() - interval '1 second' where id = ${expired.id}`;
    const live = await claim(await newPendingJob());
    const resumable = await claim(await newPendingJob());
    await writeIntent(env.tdb.db, { jobId: resumable.id, fence: resumable.leaseFence }, {
      name: 'step-001',
      position: 0,
      effect: 'unsafe',
      attempt: 1,
      attemptGroup: 1,
      idempotencyKey: `${resumable.id}:step-001:1`,
    });
    await finishJob(env.tdb.db, { jobId: resumable.id, fence: resumable.leaseFence }, { to: 'waiting', workerId: W1, reason: 'x', waitingReason: 'needs_confirmation' });
    await env.tdb.sql`update jobs set resume_requested_at = now() where id = ${resumable.id}`;
    const undecided = await claim(await newPendingJob());
    await finishJob(env.tdb.db, { jobId: undecided.id, fence: undecided.leaseFence }, { to: 'waiting', workerId: W1, reason: 'x', waitingReason: 'needs_confirmation' });
    const done = await claim(await newPendingJob());
    await finishJob(env.tdb.db, { jobId: done.id, fence: done.leaseFence }, { to: 'succeeded', workerId: W1, reason: null, result: { ok: true } });
    for (const j of [expired, live, resumable, undecided, done]) await age(j.id);

    expectReport(await env.sweeper().sweepOnce(), { redispatched: 2 });
    expect(await stateOf(expired.dispatchId)).toBe('waiting');
    expect(await stateOf(resumable.dispatchId)).toBe('waiting');
    for (const j of [live, undecided, done]) expect(await stateOf(j.dispatchId)).toBe('unknown');
  });

  it('replaces an entry left in the completed state, so BullMQ does not ignore the re-add', async () => {
    const job = await newPendingJob();
    // An entry kept after completion (removeOnComplete off): its id would block a plain add.
    await env.queue.add('run', { jobId: job.id, tenantId: TENANT }, { jobId: job.dispatchId, removeOnComplete: false });
    const conn = createRedis(REDIS_URL, { blocking: true, name: 'sweeper-test-worker' });
    const worker = new Worker<DispatchData>(QUEUE_NAME, async () => 'skipped:pending', { connection: conn, prefix: env.prefix, autorun: false });
    const completed = new Promise<void>((resolve) => worker.once('completed', () => resolve()));
    void worker.run();
    await completed;
    await worker.close();
    await conn.quit();
    expect(await stateOf(job.dispatchId)).toBe('completed');
    await age(job.id);

    expectReport(await env.sweeper().sweepOnce(), { redispatched: 1 });
    expect(await stateOf(job.dispatchId)).toBe('waiting');
    expect((await env.queue.getJob(job.dispatchId))?.data).toEqual({ jobId: job.id, tenantId: TENANT });
  });
});

describe('Sweeper.sweepOnce: expiry and retention', () => {
  it('reports expired jobs and purged checkpoints and jobs', async () => {
    const stale = await newPendingJob();
    await env.tdb.sql`update jobs set expires_at = now() - interval '1 minute', updated_at = now() where id = ${stale.id}`;
    const old = await claim(await newPendingJob());
    await writeIntent(env.tdb.db, { jobId: old.id, fence: old.leaseFence }, {
      name: 'step-001',
      position: 0,
      effect: 'idempotent',
      attempt: 1,
      attemptGroup: 1,
      idempotencyKey: `${old.id}:step-001:1`,
    });
    await finishJob(env.tdb.db, { jobId: old.id, fence: old.leaseFence }, { to: 'failed', workerId: W1, reason: 'boom' });
    await env.tdb.sql`update jobs set finished_at = now() - interval '60 days' where id = ${old.id}`;

    expectReport(await env.sweeper().sweepOnce(), { expired: 1, checkpointsPurged: 1, jobsPurged: 1 });
    const [s] = await env.tdb.sql`select status, error->>'code' as code from jobs where id = ${stale.id}`;
    expect(s).toEqual({ status: 'failed', code: 'job_expired' });
    const [tomb] = await env.tdb.sql`select status from job_tombstones where id = ${old.id}`;
    expect(tomb?.status).toBe('failed');
    // The expired job is terminal now: never re-dispatched.
    await age(stale.id);
    expectReport(await env.sweeper().sweepOnce(), {});
    expect(await stateOf(stale.dispatchId)).toBe('unknown');
  });
});

describe('Sweeper: one sweep at a time (advisory lock)', () => {
  it('returns null and does nothing while another session holds the sweeper lock', async () => {
    const job = await newPendingJob();
    await age(job.id);
    const other = createDb(env.tdb.url, { max: 1 }).sql;
    try {
      await other`select pg_advisory_lock(${SWEEPER_LOCK_ID})`;
      const [held] = await env.tdb.sql<{ n: number }[]>`
        select count(*)::int as n from pg_locks where locktype = 'advisory' and granted and objid = ${SWEEPER_LOCK_ID}`;
      expect(held?.n).toBe(1);

      expect(await env.sweeper().sweepOnce()).toBeNull();
      expect(await env.sweeper().sweepOnce()).toBeNull();
      expect(await stateOf(job.dispatchId)).toBe('unknown');

      await other`select pg_advisory_unlock(${SWEEPER_LOCK_ID})`;
      expectReport(await env.sweeper().sweepOnce(), { redispatched: 1 });
      expect(await stateOf(job.dispatchId)).toBe('waiting');
    } finally {
      await other.end({ timeout: 1 });
    }
  });

  it('releases the lock when the sweep ends, even when it failed', async () => {
    const job = await newPendingJob();
    await age(job.id);
    // A queue whose Redis connection is gone (and may not queue commands) makes the sweep throw midway.
    const conn = createRedis(REDIS_URL, { name: 'sweeper-test-broken' });
    await ready(conn);
    const broken = createJobQueue(conn, uniquePrefix('sweeper-broken'));
    await broken.waitUntilReady();
    conn.disconnect();
    cleanups.push(() => broken.close().catch(() => undefined));
    const failing = new Sweeper(env.tdb.db, env.tdb.sql, broken, OPTIONS, log);
    await expect(failing.sweepOnce()).rejects.toThrow();
    expectReport(await env.sweeper().sweepOnce(), { redispatched: 1 });
  });

  it('two sweepers started at once: the work is done exactly once', async () => {
    const jobs = [];
    for (let i = 0; i < 40; i++) jobs.push(await newPendingJob());
    await env.tdb.sql`update jobs set updated_at = now() - interval '1 hour'`;
    // Separate queue connections, as two worker processes would have.
    const otherQueue = await newQueue(env.prefix);
    const a = env.sweeper();
    const b = new Sweeper(env.tdb.db, env.tdb.sql, otherQueue, OPTIONS, log);

    const reports = await Promise.all([a.sweepOnce(), b.sweepOnce()]);
    const ran = reports.filter((r) => r !== null);
    expect(ran.length).toBeGreaterThanOrEqual(1);
    // Either the second found the lock held (null) or ran after the first and found nothing to do;
    // never do both sweep the same jobs.
    expect(ran.reduce((n, r) => n + r.redispatched, 0)).toBe(jobs.length);
    if (ran.length === 2) expect(ran.map((r) => r.redispatched).sort((x, y) => x - y)).toEqual([0, jobs.length]);
    expect(await entryCount()).toBe(jobs.length);
    for (const j of jobs) expect(await stateOf(j.dispatchId)).toBe('waiting');
  });

  it('while one sweep is in progress, a concurrent sweepOnce returns null', async () => {
    const job = await newPendingJob();
    await age(job.id);
    // Hold the transaction-level lock exactly as a running sweep does, from another session.
    const other = createDb(env.tdb.url, { max: 1 }).sql;
    try {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const tx = other.begin(async (t) => {
        const [row] = await t<{ got: boolean }[]>`select pg_try_advisory_xact_lock(${SWEEPER_LOCK_ID}) as got`;
        expect(row?.got).toBe(true);
        locked();
        await released;
      });
      await isLocked;
      expect(await env.sweeper().sweepOnce()).toBeNull();
      release();
      await tx;
      expectReport(await env.sweeper().sweepOnce(), { redispatched: 1 });
    } finally {
      await other.end({ timeout: 1 });
    }
  });
});

describe('Sweeper.start / stop', () => {
  it('sweeps on its interval until stopped', async () => {
    const job = await newPendingJob();
    await age(job.id);
    const sweeper = env.sweeper({ intervalMs: 200 });
    sweeper.start();
    try {
      for (let i = 0; i < 100 && (await stateOf(job.dispatchId)) !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await stateOf(job.dispatchId)).toBe('waiting');
    } finally {
      await sweeper.stop();
    }
    // Stopped: a job that needs dispatch now stays undispatched.
    const later = await newPendingJob();
    await age(later.id);
    await new Promise((r) => setTimeout(r, 700));
    expect(await stateOf(later.dispatchId)).toBe('unknown');
  });
});
