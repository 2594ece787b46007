import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createTestDatabase, insertTestJob } from '../../testing/index.js';
import type { TestDatabase } from '../../testing/index.js';
import { claimJob } from './claim-job.js';
import { finishJob } from './finish-job.js';
import { writeCheckpoint, writeIntent, writeProgress } from './fenced-writes.js';
import type { StepIdentity } from './fenced-writes.js';
import { expireJobs, findDispatchCandidates, purgeCheckpoints, purgeJobs } from './sweep-ops.js';
import type { Job } from '../../job/job.js';
import { sha256Hex } from '../../hash/idempotency-hash.js';
import type { JobId, TenantId, WorkerId } from '../../ids.js';
import type { ErrorInfo } from '../../errors/stepwise-error.js';
import { LeaseLostError } from '../../errors/lease-lost-error.js';

// The sweeper's statements (DESIGN §1, §4) against a real Postgres. Each describe block gets its
// own database, because every statement here scans the whole jobs table and counts are exact.

const TENANT = 'acme' as TenantId;
const W1 = 'wrk_sweep_1_aaaa' as WorkerId;
const LEASE_MS = 60_000;
const MIN_AGE_MS = 60_000;

const EXPIRED: ErrorInfo = { code: 'job_expired', category: 'timeout', retryable: false, message: 'The job did not finish within its time to live.' };


/** A database of its own for the enclosing describe block. */
function useDatabase(label: string): () => TestDatabase {
  let tdb: TestDatabase | undefined;
  beforeAll(async () => {
    tdb = await createTestDatabase(label);
  });
  afterAll(async () => {
    await tdb?.drop();
  });
  return () => {
    if (!tdb) throw new Error('database not ready');
    return tdb;
  };
}

async function newPendingJob(tdb: TestDatabase): Promise<Job> {
  return insertTestJob(tdb.db, { tenantId: TENANT, plan: [{ name: 'fetch', effect: 'none' }, { name: 'store', effect: 'idempotent' }] });
}

function stepId(jobId: JobId, name: string, position: number): StepIdentity {
  return { name, position, effect: position === 0 ? 'none' : 'idempotent', attempt: 1, attemptGroup: 1, idempotencyKey: `${jobId}:${name}:1` };
}

async function newRunningJob(tdb: TestDatabase): Promise<Job> {
  const job = await newPendingJob(tdb);
  const claimed = await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
  if (!claimed) throw new Error('claim failed');
  return claimed.job;
}

type Finish = 'retrying' | 'waiting' | 'succeeded' | 'failed' | 'cancelled';

/** A job moved through the real guarded statements to `to`, with one checkpoint written first. */
async function newJobIn(tdb: TestDatabase, to: Finish, extra: { result?: unknown; error?: ErrorInfo } = {}): Promise<Job> {
  const job = await newRunningJob(tdb);
  const f = { jobId: job.id, fence: job.leaseFence };
  await writeIntent(tdb.db, f, stepId(job.id, 'fetch', 0));
  await writeCheckpoint(tdb.db, f, {
    step: stepId(job.id, 'fetch', 0),
    output: { rows: 1 },
    outputSha256: sha256Hex(JSON.stringify({ rows: 1 })),
    startedAt: new Date(),
    stepsDone: 1,
    nextStep: 'store',
    progress: { done: 1, total: 2, message: null },
  });
  const error = extra.error ?? (to === 'failed' || to === 'retrying' ? { code: 'boom', category: 'transient' as const, retryable: true, message: 'boom' } : null);
  return finishJob(tdb.db, f, {
    to,
    workerId: W1,
    reason: to,
    ...(extra.result !== undefined ? { result: extra.result } : {}),
    error,
    ...(to === 'retrying' ? { nextRunAt: new Date(Date.now() + 30_000), nextAttempt: 2 } : {}),
    ...(to === 'waiting' ? { waitingReason: 'needs_confirmation' } : {}),
  });
}

/** Makes a job look untouched for `seconds` (the sweeper's minimum age). */
async function age(tdb: TestDatabase, jobId: JobId, seconds: number): Promise<void> {
  await tdb.sql`update jobs set updated_at = now() - ${seconds} * interval '1 second' where id = ${jobId}`;
}

async function snapshot(tdb: TestDatabase, jobId: JobId): Promise<unknown> {
  const [job] = await tdb.sql`select * from jobs where id = ${jobId}`;
  const steps = await tdb.sql`select * from job_steps where job_id = ${jobId} order by position`;
  const events = await tdb.sql`select * from job_events where job_id = ${jobId} order by id`;
  return { job, steps, events };
}

describe('findDispatchCandidates', () => {
  const db = useDatabase('sweep-find');

  it('returns pending, retrying, expired-lease running and resumable waiting jobs older than minAgeMs, oldest first', async () => {
    const tdb = db();
    const pending = await newPendingJob(tdb);
    const retrying = await newJobIn(tdb, 'retrying');
    const expiredLease = await newRunningJob(tdb);
    await tdb.sql`update jobs set lease_expires_at = now() - interval '1 second' where id = ${expiredLease.id}`;
    const resumable = await newJobIn(tdb, 'waiting');
    await tdb.sql`update jobs set resume_requested_at = now() where id = ${resumable.id}`;

    // Stagger their ages so the order is known: pending is the oldest.
    await age(tdb, pending.id, 400);
    await age(tdb, retrying.id, 300);
    await age(tdb, expiredLease.id, 200);
    await age(tdb, resumable.id, 100);

    const found = await findDispatchCandidates(tdb.db, MIN_AGE_MS, 100);
    expect(found.map((c) => c.jobId)).toEqual([pending.id, retrying.id, expiredLease.id, resumable.id]);
    expect(found[0]).toEqual({ jobId: pending.id, tenantId: TENANT, dispatchId: pending.dispatchId, status: 'pending', dueAt: null });
    expect(found[1]).toMatchObject({ jobId: retrying.id, tenantId: TENANT, dispatchId: retrying.dispatchId, status: 'retrying' });
    expect(found[1]?.dueAt).toBeInstanceOf(Date);
    expect(found[1]?.dueAt?.getTime()).toBe(retrying.nextRunAt?.getTime());
    expect(found[2]).toMatchObject({ jobId: expiredLease.id, status: 'running', dueAt: null });
    expect(found[3]).toMatchObject({ jobId: resumable.id, status: 'waiting', dueAt: null });

    // `limit` keeps the oldest.
    expect((await findDispatchCandidates(tdb.db, MIN_AGE_MS, 2)).map((c) => c.jobId)).toEqual([pending.id, retrying.id]);
  });

  it('leaves out fresh jobs, live leases, waiting jobs nobody decided on, and terminal jobs', async () => {
    const tdb = db();
    const before = new Set((await findDispatchCandidates(tdb.db, MIN_AGE_MS, 1000)).map((c) => c.jobId));

    const fresh = await newPendingJob(tdb); // its enqueue may still be in flight
    const freshRetrying = await newJobIn(tdb, 'retrying');
    const liveLease = await newRunningJob(tdb);
    const waiting = await newJobIn(tdb, 'waiting');
    const succeeded = await newJobIn(tdb, 'succeeded', { result: { ok: true } });
    const failed = await newJobIn(tdb, 'failed');
    const cancelled = await newJobIn(tdb, 'cancelled');
    for (const j of [liveLease, waiting, succeeded, failed, cancelled]) await age(tdb, j.id, 3600);

    const found = await findDispatchCandidates(tdb.db, MIN_AGE_MS, 1000);
    const ids = found.map((c) => c.jobId);
    for (const j of [fresh, freshRetrying, liveLease, waiting, succeeded, failed, cancelled]) expect(ids).not.toContain(j.id);
    expect(new Set(ids)).toEqual(before);

    // With no minimum age the fresh ones qualify, the others still do not.
    const all = (await findDispatchCandidates(tdb.db, 0, 1000)).map((c) => c.jobId);
    expect(all).toContain(fresh.id);
    expect(all).toContain(freshRetrying.id);
    for (const j of [liveLease, waiting, succeeded, failed, cancelled]) expect(all).not.toContain(j.id);

    // Once old enough, the fresh pending job is a candidate.
    await age(tdb, fresh.id, 120);
    expect((await findDispatchCandidates(tdb.db, MIN_AGE_MS, 1000)).map((c) => c.jobId)).toContain(fresh.id);
  });
});

describe('expireJobs', () => {
  const db = useDatabase('sweep-expire');

  it('fails only non-terminal jobs past expires_at, with a transition event (reason expired)', async () => {
    const tdb = db();
    const pending = await newPendingJob(tdb);
    const running = await newRunningJob(tdb);
    const waiting = await newJobIn(tdb, 'waiting');
    const retrying = await newJobIn(tdb, 'retrying');
    const notYet = await newPendingJob(tdb);
    const noTtl = await newPendingJob(tdb);
    const succeeded = await newJobIn(tdb, 'succeeded', { result: { ok: 1 } });
    const cancelled = await newJobIn(tdb, 'cancelled');
    const past = [pending, running, waiting, retrying, succeeded, cancelled];
    for (const j of past) await tdb.sql`update jobs set expires_at = now() - interval '1 minute' where id = ${j.id}`;
    await tdb.sql`update jobs set expires_at = null where id = ${noTtl.id}`;
    const untouched = await Promise.all([notYet, noTtl, succeeded, cancelled].map((j) => snapshot(tdb, j.id)));
    const versions = new Map(past.map((j) => [j.id, j.version]));

    const expired = await expireJobs(tdb.db, EXPIRED, 100);
    expect([...expired].sort()).toEqual([pending.id, running.id, waiting.id, retrying.id].sort());

    for (const j of [pending, running, waiting, retrying]) {
      const [row] = await tdb.sql`
        select status, error, finished_at is not null as finished, lease_owner, lease_expires_at, version from jobs where id = ${j.id}`;
      expect(row).toEqual({ status: 'failed', error: EXPIRED, finished: true, lease_owner: null, lease_expires_at: null, version: (versions.get(j.id) ?? 0) + 1 });
      const events = await tdb.sql`select kind, from_status, to_status, reason, version from job_events where job_id = ${j.id} order by id`;
      expect(events.at(-1)).toEqual({ kind: 'transition', from_status: j.status, to_status: 'failed', reason: 'expired', version: (versions.get(j.id) ?? 0) + 1 });
    }
    // Terminal jobs and jobs still inside their TTL are left exactly as they were.
    expect(await Promise.all([notYet, noTtl, succeeded, cancelled].map((j) => snapshot(tdb, j.id)))).toEqual(untouched);

    // The worker that held the running job finds its lease gone on its next write.
    await expect(writeProgress(tdb.db, { jobId: running.id, fence: running.leaseFence }, { done: 1, total: 2, message: null })).rejects.toBeInstanceOf(
      LeaseLostError,
    );

    // A second sweep finds nothing more.
    expect(await expireJobs(tdb.db, EXPIRED, 100)).toEqual([]);
  });

  it('expires at most `limit` jobs per call, oldest expiry first', async () => {
    const tdb = db();
    const a = await newPendingJob(tdb);
    const b = await newPendingJob(tdb);
    const c = await newPendingJob(tdb);
    await tdb.sql`update jobs set expires_at = now() - interval '3 minutes' where id = ${a.id}`;
    await tdb.sql`update jobs set expires_at = now() - interval '2 minutes' where id = ${b.id}`;
    await tdb.sql`update jobs set expires_at = now() - interval '1 minute' where id = ${c.id}`;
    expect(await expireJobs(tdb.db, EXPIRED, 2)).toEqual(expect.arrayContaining([a.id, b.id]));
    const [row] = await tdb.sql`select status from jobs where id = ${c.id}`;
    expect(row?.status).toBe('pending');
    expect(await expireJobs(tdb.db, EXPIRED, 2)).toEqual([c.id]);
  });
});

describe('purgeCheckpoints', () => {
  const db = useDatabase('sweep-ckpt');

  it('removes job_steps only of jobs finished before the cutoff, keeping the jobs', async () => {
    const tdb = db();
    const old = await newJobIn(tdb, 'succeeded', { result: { ok: 1 } });
    // A second checkpoint for the old job, so more than one row goes.
    await tdb.sql`
      insert into job_steps (job_id, step_name, position, status, effect, idempotency_key, lease_fence)
      values (${old.id}, 'store', 1, 'succeeded', 'idempotent', ${`${old.id}:store:1`}, 1)`;
    const recent = await newJobIn(tdb, 'failed');
    const running = await newRunningJob(tdb);
    await writeIntent(tdb.db, { jobId: running.id, fence: running.leaseFence }, stepId(running.id, 'fetch', 0));
    await tdb.sql`update jobs set finished_at = now() - interval '10 days' where id = ${old.id}`;
    await tdb.sql`update jobs set finished_at = now() - interval '1 hour' where id = ${recent.id}`;
    const keep = await Promise.all([recent, running].map((j) => snapshot(tdb, j.id)));

    const cutoff = new Date(Date.now() - 5 * 24 * 3600_000);
    expect(await purgeCheckpoints(tdb.db, cutoff, 100)).toBe(2);

    const [gone] = await tdb.sql`select count(*)::int as n from job_steps where job_id = ${old.id}`;
    expect(gone?.n).toBe(0);
    const [job] = await tdb.sql`select status from jobs where id = ${old.id}`;
    expect(job?.status).toBe('succeeded');
    expect(await Promise.all([recent, running].map((j) => snapshot(tdb, j.id)))).toEqual(keep);

    expect(await purgeCheckpoints(tdb.db, cutoff, 100)).toBe(0);
  });

  it('deletes at most `limit` rows per call', async () => {
    const tdb = db();
    const a = await newJobIn(tdb, 'succeeded', { result: { ok: 2 } });
    const b = await newJobIn(tdb, 'cancelled');
    await tdb.sql`update jobs set finished_at = now() - interval '10 days' where id in ${tdb.sql([a.id, b.id])}`;
    const cutoff = new Date(Date.now() - 5 * 24 * 3600_000);
    expect(await purgeCheckpoints(tdb.db, cutoff, 1)).toBe(1);
    expect(await purgeCheckpoints(tdb.db, cutoff, 1)).toBe(1);
    expect(await purgeCheckpoints(tdb.db, cutoff, 1)).toBe(0);
  });
});

describe('purgeJobs', () => {
  const db = useDatabase('sweep-purge');

  it('deletes jobs finished before the cutoff, leaves tombstones, and keeps job_events and audit_events', async () => {
    const tdb = db();
    const bigResult = { text: 'x'.repeat(800) };
    const okJob = await newJobIn(tdb, 'succeeded', { result: bigResult });
    const failError: ErrorInfo = { code: 'http_forbidden', category: 'forbidden', retryable: false, message: 'denied' };
    const failedJob = await newJobIn(tdb, 'failed', { error: failError });
    const recent = await newJobIn(tdb, 'cancelled');
    const running = await newRunningJob(tdb);
    const doomed = [okJob, failedJob];
    await tdb.sql`update jobs set finished_at = now() - interval '40 days' where id in ${tdb.sql(doomed.map((j) => j.id))}`;
    await tdb.sql`update jobs set finished_at = now() - interval '1 day' where id = ${recent.id}`;

    const rows = await tdb.sql<{ id: string; tenant_id: string; principal_id: string; type: string; result_text: string | null; created_at: Date; finished_at: Date }[]>`
      select id, tenant_id, principal_id, type, result::text as result_text, created_at, finished_at from jobs where id in ${tdb.sql(doomed.map((j) => j.id))}`;
    const byId = new Map(rows.map((r) => [r.id, r]));
    const countsOf = async (table: 'job_events' | 'audit_events', col: 'job_id' | 'target_job_id') =>
      (await tdb.sql<{ n: number }[]>`select count(*)::int as n from ${tdb.sql(table)} where ${tdb.sql(col)} in ${tdb.sql(doomed.map((j) => j.id))}`)[0]?.n;
    const eventsBefore = await countsOf('job_events', 'job_id');
    const auditsBefore = await countsOf('audit_events', 'target_job_id');
    expect(eventsBefore).toBeGreaterThanOrEqual(6); // created, claimed, finished for each
    expect(auditsBefore).toBe(2);
    const keep = await Promise.all([recent, running].map((j) => snapshot(tdb, j.id)));

    const cutoff = new Date(Date.now() - 30 * 24 * 3600_000);
    expect(await purgeJobs(tdb.db, cutoff, 100)).toBe(2);

    const [left] = await tdb.sql`select count(*)::int as n from jobs where id in ${tdb.sql(doomed.map((j) => j.id))}`;
    expect(left?.n).toBe(0);
    const [steps] = await tdb.sql`select count(*)::int as n from job_steps where job_id in ${tdb.sql(doomed.map((j) => j.id))}`;
    expect(steps?.n).toBe(0);

    const tombs = await tdb.sql`
      select id, tenant_id, principal_id, type, status, result_sha256, result_summary, error_code, created_at, finished_at,
             deleted_at is not null as deleted
      from job_tombstones order by id`;
    expect(tombs).toHaveLength(2);
    const okRow = byId.get(okJob.id);
    const failedRow = byId.get(failedJob.id);
    expect(tombs.find((t) => t.id === okJob.id)).toEqual({
      id: okJob.id,
      tenant_id: TENANT,
      principal_id: 'alice',
      type: 'demo.steps',
      status: 'succeeded',
      result_sha256: sha256Hex(okRow?.result_text ?? ''),
      result_summary: okRow?.result_text?.slice(0, 500),
      error_code: null,
      created_at: okRow?.created_at,
      finished_at: okRow?.finished_at,
      deleted: true,
    });
    expect(tombs.find((t) => t.id === okJob.id)?.result_summary).toHaveLength(500);
    expect(tombs.find((t) => t.id === failedJob.id)).toEqual({
      id: failedJob.id,
      tenant_id: TENANT,
      principal_id: 'alice',
      type: 'demo.steps',
      status: 'failed',
      result_sha256: null,
      result_summary: null,
      error_code: 'http_forbidden',
      created_at: failedRow?.created_at,
      finished_at: failedRow?.finished_at,
      deleted: true,
    });

    // History stays: the event and audit rows of deleted jobs are untouched.
    expect(await countsOf('job_events', 'job_id')).toBe(eventsBefore);
    expect(await countsOf('audit_events', 'target_job_id')).toBe(auditsBefore);

    // Jobs finished after the cutoff, and unfinished jobs, are untouched.
    expect(await Promise.all([recent, running].map((j) => snapshot(tdb, j.id)))).toEqual(keep);
    expect(await purgeJobs(tdb.db, cutoff, 100)).toBe(0);
  });

  it('deletes at most `limit` jobs per call, oldest finished first', async () => {
    const tdb = db();
    const a = await newJobIn(tdb, 'succeeded', { result: { n: 'a' } });
    const b = await newJobIn(tdb, 'succeeded', { result: { n: 'b' } });
    await tdb.sql`update jobs set finished_at = now() - interval '50 days' where id = ${a.id}`;
    await tdb.sql`update jobs set finished_at = now() - interval '45 days' where id = ${b.id}`;
    const cutoff = new Date(Date.now() - 30 * 24 * 3600_000);
    expect(await purgeJobs(tdb.db, cutoff, 1)).toBe(1);
    const remaining = await tdb.sql`select id from jobs where id in ${tdb.sql([a.id, b.id])}`;
    expect(remaining.map((r) => r.id)).toEqual([b.id]);
    expect(await purgeJobs(tdb.db, cutoff, 1)).toBe(1);
    const [t] = await tdb.sql`select count(*)::int as n from job_tombstones where id in ${tdb.sql([a.id, b.id])}`;
    expect(t?.n).toBe(2);
  });
});
