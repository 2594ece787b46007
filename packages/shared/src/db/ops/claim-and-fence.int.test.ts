import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createTestDatabase, insertTestJob } from '../../testing/index.js';
import type { TestDatabase } from '../../testing/index.js';
import { claimJob } from './claim-job.js';
import { finishJob } from './finish-job.js';
import { requestCancel } from './request-cancel.js';
import { releaseLease, renewLease, writeCheckpoint, writeCursor, writeIntent, writeProgress } from './fenced-writes.js';
import type { Checkpoint, Fence, StepIdentity } from './fenced-writes.js';
import type { Job } from '../../job/job.js';
import { sha256Hex } from '../../hash/idempotency-hash.js';
import { newJobId } from '../../ids.js';
import type { JobId, TenantId, WorkerId } from '../../ids.js';
import { LeaseLostError } from '../../errors/lease-lost-error.js';
import { InvalidTransitionError } from '../../errors/invalid-transition-error.js';
import { CancelledError } from '../../errors/cancelled-error.js';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase('claim-fence');
});

afterAll(async () => {
  await tdb?.drop();
});

const TENANT = 'acme' as TenantId;
const W1 = 'wrk_one_1_aaaa' as WorkerId;
const W2 = 'wrk_two_2_bbbb' as WorkerId;
const W3 = 'wrk_three_3_cccc' as WorkerId;
const LEASE_MS = 60_000;

async function newPendingJob(): Promise<Job> {
  return insertTestJob(tdb.db, { tenantId: TENANT, plan: [{ name: 'fetch', effect: 'none' }, { name: 'store', effect: 'idempotent' }] });
}

function stepId(jobId: JobId, name: string, position: number, attempt = 1): StepIdentity {
  return { name, position, effect: position === 0 ? 'none' : 'idempotent', attempt, attemptGroup: 1, idempotencyKey: `${jobId}:${name}:1` };
}

function checkpoint(jobId: JobId, name: string, position: number, output: unknown, nextStep: string | null): Checkpoint {
  return {
    step: stepId(jobId, name, position),
    output,
    outputSha256: sha256Hex(JSON.stringify(output)),
    startedAt: new Date(),
    stepsDone: position + 1,
    nextStep,
    progress: { done: position + 1, total: 2, message: `step ${position + 1} done` },
  };
}

async function expireLease(jobId: JobId): Promise<void> {
  await tdb.sql`update jobs set lease_expires_at = now() - interval '1 second' where id = ${jobId}`;
}

/** Everything a fenced write could touch, for before/after comparison. */
async function snapshot(jobId: JobId): Promise<unknown> {
  const [job] = await tdb.sql`select * from jobs where id = ${jobId}`;
  const steps = await tdb.sql`select * from job_steps where job_id = ${jobId} order by position`;
  const events = await tdb.sql`select * from job_events where job_id = ${jobId} order by id`;
  return { job, steps, events };
}

async function events(jobId: JobId) {
  return tdb.sql<{ kind: string; from_status: string | null; to_status: string | null; worker_id: string | null; details: unknown; reason: string | null; version: number }[]>`
    select kind, from_status, to_status, worker_id, details, reason, version from job_events where job_id = ${jobId} order by id`;
}

async function rejectsLeaseLost(p: Promise<unknown>, jobId: JobId, fence: number): Promise<void> {
  let thrown: unknown;
  try {
    await p;
  } catch (e: unknown) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(LeaseLostError);
  expect((thrown as LeaseLostError).details).toEqual({ jobId, fence });
  expect((thrown as LeaseLostError).retryable).toBe(false);
}

describe('claimJob', () => {
  it('moves pending → running, bumps lease_fence, sets the lease and records an event', async () => {
    const job = await newPendingJob();
    const claimed = await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    expect(claimed).not.toBeNull();
    expect(claimed?.previousStatus).toBe('pending');
    expect(claimed?.steps).toEqual([]);
    expect(claimed?.job).toMatchObject({ id: job.id, status: 'running', leaseFence: 1, leaseOwner: W1, version: 1 });
    expect(claimed?.job.startedAt).toBeInstanceOf(Date);
    const [row] = await tdb.sql`select lease_expires_at > now() + interval '30 seconds' as long_lease from jobs where id = ${job.id}`;
    expect(row?.long_lease).toBe(true);

    const ev = await events(job.id);
    expect(ev).toHaveLength(2);
    expect(ev[1]).toMatchObject({ kind: 'transition', from_status: 'pending', to_status: 'running', worker_id: W1, version: 1, details: { fence: 1 } });
  });

  it('returns null for a second claim while the lease is live, changing nothing', async () => {
    const job = await newPendingJob();
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    const before = await snapshot(job.id);
    expect(await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS })).toBeNull();
    expect(await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS })).toBeNull();
    expect(await snapshot(job.id)).toEqual(before);
  });

  it('returns null for an unknown job', async () => {
    expect(await claimJob(tdb.db, { jobId: newJobId(), workerId: W1, leaseMs: LEASE_MS })).toBeNull();
  });

  it('only one of many concurrent claimers wins', async () => {
    const job = await newPendingJob();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => claimJob(tdb.db, { jobId: job.id, workerId: `wrk_race_${i}_x` as WorkerId, leaseMs: LEASE_MS })),
    );
    const winners = results.filter((r) => r !== null);
    expect(winners).toHaveLength(1);
    expect(winners[0]?.job.leaseFence).toBe(1);
    expect((await events(job.id)).filter((e) => e.to_status === 'running')).toHaveLength(1);
  });

  it('after the lease expires another worker takes over with fence + 1; the old fence can no longer write', async () => {
    const job = await newPendingJob();
    const first = await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    expect(first?.job.leaseFence).toBe(1);
    const oldFence: Fence = { jobId: job.id, fence: 1 };
    // The first worker got as far as the intent of step 1 before it stalled.
    await writeIntent(tdb.db, oldFence, stepId(job.id, 'fetch', 0));

    await expireLease(job.id);
    const second = await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS });
    expect(second).not.toBeNull();
    expect(second?.previousStatus).toBe('running');
    expect(second?.job).toMatchObject({ status: 'running', leaseFence: 2, leaseOwner: W2 });
    expect(second?.steps.map((s) => [s.name, s.status])).toEqual([['fetch', 'started']]);
    const ev = await events(job.id);
    expect(ev.at(-1)).toMatchObject({ kind: 'lease_taken_over', from_status: 'running', to_status: 'running', worker_id: W2, details: { fence: 2 } });

    // The new holder writes its own intent, so there is a step row for the zombie to try to touch.
    const newFence: Fence = { jobId: job.id, fence: 2 };
    await writeIntent(tdb.db, newFence, stepId(job.id, 'fetch', 0, 2));
    const before = await snapshot(job.id);

    await rejectsLeaseLost(writeIntent(tdb.db, oldFence, stepId(job.id, 'fetch', 0)), job.id, 1);
    await rejectsLeaseLost(writeCheckpoint(tdb.db, oldFence, checkpoint(job.id, 'fetch', 0, { zombie: true }, 'store')), job.id, 1);
    await rejectsLeaseLost(writeProgress(tdb.db, oldFence, { done: 99, total: 100, message: 'zombie' }), job.id, 1);
    await rejectsLeaseLost(writeCursor(tdb.db, oldFence, 'fetch', { at: 'zombie' }), job.id, 1);
    await rejectsLeaseLost(renewLease(tdb.db, oldFence, 3_600_000), job.id, 1);
    await rejectsLeaseLost(
      finishJob(tdb.db, oldFence, { to: 'succeeded', workerId: W1, reason: 'zombie', result: { zombie: true } }),
      job.id,
      1,
    );
    await releaseLease(tdb.db, oldFence); // silently a no-op for a stale fence

    expect(await snapshot(job.id)).toEqual(before);

    // The live holder is unaffected and can still write.
    await expect(writeProgress(tdb.db, newFence, { done: 1, total: 2, message: 'ok' })).resolves.toEqual({ cancelRequestedAt: null });
  });

  it('a third claim after another expiry gets fence 3', async () => {
    const job = await newPendingJob();
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    await expireLease(job.id);
    await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS });
    await expireLease(job.id);
    const third = await claimJob(tdb.db, { jobId: job.id, workerId: W3, leaseMs: LEASE_MS });
    expect(third?.job.leaseFence).toBe(3);
    await rejectsLeaseLost(renewLease(tdb.db, { jobId: job.id, fence: 2 }, LEASE_MS), job.id, 2);
  });

  it('releaseLease lets another worker claim at once, and the released fence cannot write', async () => {
    const job = await newPendingJob();
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    expect(await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS })).toBeNull();
    await releaseLease(tdb.db, { jobId: job.id, fence: 1 });
    const next = await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS });
    expect(next?.job.leaseFence).toBe(2);
    await rejectsLeaseLost(writeProgress(tdb.db, { jobId: job.id, fence: 1 }, { done: 1, total: 1, message: null }), job.id, 1);
  });

  it('claims a retrying job too, clearing next_run_at', async () => {
    const job = await newPendingJob();
    const f: Fence = { jobId: job.id, fence: 1 };
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    const retrying = await finishJob(tdb.db, f, { to: 'retrying', workerId: W1, reason: 'transient', nextRunAt: new Date(Date.now() + 60_000), nextAttempt: 2 });
    expect(retrying.status).toBe('retrying');
    expect(retrying.nextRunAt).toBeInstanceOf(Date);
    expect(retrying.attempt).toBe(2);
    const again = await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS });
    expect(again?.previousStatus).toBe('retrying');
    expect(again?.job).toMatchObject({ status: 'running', leaseFence: 2, nextRunAt: null });
  });

  it('does not claim waiting or terminal jobs', async () => {
    const waiting = await newPendingJob();
    await claimJob(tdb.db, { jobId: waiting.id, workerId: W1, leaseMs: LEASE_MS });
    await finishJob(tdb.db, { jobId: waiting.id, fence: 1 }, { to: 'waiting', workerId: W1, reason: 'approval', waitingReason: 'needs_approval' });
    expect(await claimJob(tdb.db, { jobId: waiting.id, workerId: W2, leaseMs: LEASE_MS })).toBeNull();

    const done = await newPendingJob();
    await claimJob(tdb.db, { jobId: done.id, workerId: W1, leaseMs: LEASE_MS });
    await finishJob(tdb.db, { jobId: done.id, fence: 1 }, { to: 'failed', workerId: W1, reason: 'boom' });
    expect(await claimJob(tdb.db, { jobId: done.id, workerId: W2, leaseMs: LEASE_MS })).toBeNull();
  });
});

describe('fenced writes', () => {
  it('intent, cursor, checkpoint and progress land for the holder and report no cancellation', async () => {
    const job = await newPendingJob();
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    const f: Fence = { jobId: job.id, fence: 1 };

    expect(await writeIntent(tdb.db, f, stepId(job.id, 'fetch', 0))).toEqual({ cancelRequestedAt: null });
    expect(await writeCursor(tdb.db, f, 'fetch', { file: 4392 })).toEqual({ cancelRequestedAt: null });
    let [step] = await tdb.sql`select status, cursor, attempt, idempotency_key, lease_fence from job_steps where job_id = ${job.id}`;
    expect(step).toEqual({ status: 'started', cursor: { file: 4392 }, attempt: 1, idempotency_key: `${job.id}:fetch:1`, lease_fence: 1 });

    expect(await writeCheckpoint(tdb.db, f, checkpoint(job.id, 'fetch', 0, { rows: 3 }, 'store'))).toEqual({ cancelRequestedAt: null });
    [step] = await tdb.sql`select status, output, cursor, finished_at is not null as finished from job_steps where job_id = ${job.id}`;
    expect(step).toEqual({ status: 'succeeded', output: { rows: 3 }, cursor: null, finished: true });
    const [j] = await tdb.sql`select steps_done, current_step, progress_done, progress_total, progress_message from jobs where id = ${job.id}`;
    expect(j).toEqual({ steps_done: 1, current_step: 'store', progress_done: 1, progress_total: 2, progress_message: 'step 1 done' });

    expect(await writeProgress(tdb.db, f, { done: 1.5, total: 2, message: 'halfway' })).toEqual({ cancelRequestedAt: null });
    const [p] = await tdb.sql`select progress_done, progress_message from jobs where id = ${job.id}`;
    expect(p).toEqual({ progress_done: 1.5, progress_message: 'halfway' });
  });

  it('renewLease extends the lease', async () => {
    const job = await newPendingJob();
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: 1_000 });
    await renewLease(tdb.db, { jobId: job.id, fence: 1 }, 600_000);
    const [row] = await tdb.sql`select lease_expires_at > now() + interval '5 minutes' as extended from jobs where id = ${job.id}`;
    expect(row?.extended).toBe(true);
  });

  it('every fenced write reports cancel_requested_at once a cancel was requested', async () => {
    const job = await newPendingJob();
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    const f: Fence = { jobId: job.id, fence: 1 };
    expect((await writeIntent(tdb.db, f, stepId(job.id, 'fetch', 0))).cancelRequestedAt).toBeNull();

    const cancel = await requestCancel(tdb.db, { tenantId: TENANT, jobId: job.id, reason: 'stop', error: new CancelledError().toInfo() });
    expect(cancel?.effect).toBe('requested');
    const requestedAt = cancel?.job.cancelRequestedAt;
    expect(requestedAt).toBeInstanceOf(Date);
    expect(Number.isFinite(requestedAt?.getTime())).toBe(true);

    const acks = [
      await writeCheckpoint(tdb.db, f, checkpoint(job.id, 'fetch', 0, { ok: 1 }, 'store')),
      await writeIntent(tdb.db, f, stepId(job.id, 'store', 1)),
      await writeCursor(tdb.db, f, 'store', { i: 1 }),
      await writeProgress(tdb.db, f, { done: 1, total: 2, message: null }),
      await renewLease(tdb.db, f, LEASE_MS),
    ];
    for (const a of acks) {
      expect(a.cancelRequestedAt).toBeInstanceOf(Date);
      expect(a.cancelRequestedAt?.getTime()).toBe(requestedAt?.getTime());
    }
  });
});

describe('finishJob', () => {
  it('running → succeeded writes result, last checkpoint, event and releases the lease in one statement', async () => {
    const job = await newPendingJob();
    const claimed = await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    const f: Fence = { jobId: job.id, fence: 1 };
    await writeIntent(tdb.db, f, stepId(job.id, 'fetch', 0));
    await writeCheckpoint(tdb.db, f, checkpoint(job.id, 'fetch', 0, { rows: 3 }, 'store'));
    await writeIntent(tdb.db, f, stepId(job.id, 'store', 1));

    const last = checkpoint(job.id, 'store', 1, { stored: 3 }, null);
    const done = await finishJob(tdb.db, f, {
      to: 'succeeded',
      workerId: W1,
      reason: 'all steps done',
      result: { stored: 3 },
      stepsDone: 2,
      progress: { done: 2, total: 2, message: 'done' },
      step: { kind: 'succeeded', checkpoint: last },
    });
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { stored: 3 },
      stepsDone: 2,
      currentStep: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      version: (claimed?.job.version ?? 0) + 1,
    });
    expect(done.finishedAt).toBeInstanceOf(Date);

    const steps = await tdb.sql`select step_name, status, output, output_sha256 from job_steps where job_id = ${job.id} order by position`;
    expect(steps).toEqual([
      { step_name: 'fetch', status: 'succeeded', output: { rows: 3 }, output_sha256: sha256Hex(JSON.stringify({ rows: 3 })) },
      { step_name: 'store', status: 'succeeded', output: { stored: 3 }, output_sha256: last.outputSha256 },
    ]);
    const ev = await events(job.id);
    expect(ev.at(-1)).toMatchObject({ kind: 'transition', from_status: 'running', to_status: 'succeeded', worker_id: W1, reason: 'all steps done', version: done.version });

    // A second finish fails: the job is no longer running.
    const before = await snapshot(job.id);
    await rejectsLeaseLost(finishJob(tdb.db, f, { to: 'failed', workerId: W1, reason: 'again' }), job.id, 1);
    await rejectsLeaseLost(finishJob(tdb.db, f, { to: 'succeeded', workerId: W1, reason: 'again', result: { other: true } }), job.id, 1);
    expect(await snapshot(job.id)).toEqual(before);
  });

  it('running → failed stores the error and the failed step', async () => {
    const job = await newPendingJob();
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    const f: Fence = { jobId: job.id, fence: 1 };
    const error = { code: 'http_forbidden', category: 'forbidden' as const, retryable: false, message: 'denied' };
    const failed = await finishJob(tdb.db, f, {
      to: 'failed',
      workerId: W1,
      reason: 'forbidden',
      error,
      step: { kind: 'failed', step: stepId(job.id, 'fetch', 0), error, startedAt: new Date() },
    });
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual(error);
    const [s] = await tdb.sql`select status, error from job_steps where job_id = ${job.id}`;
    expect(s).toEqual({ status: 'failed', error });
    const ev = await events(job.id);
    expect(ev.at(-1)).toMatchObject({ to_status: 'failed', details: { error } });
  });

  it.each(['pending', 'running'] as const)('rejects a finish to %s via assertTransition, writing nothing', async (to) => {
    const job = await newPendingJob();
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    const before = await snapshot(job.id);
    await expect(finishJob(tdb.db, { jobId: job.id, fence: 1 }, { to: to as never, workerId: W1, reason: 'bad' })).rejects.toBeInstanceOf(
      InvalidTransitionError,
    );
    expect(await snapshot(job.id)).toEqual(before);
  });
});
