import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createTestDatabase, insertTestJob } from '../../testing/index.js';
import type { TestDatabase } from '../../testing/index.js';
import { createJob } from './create-job.js';
import { claimJob } from './claim-job.js';
import { finishJob } from './finish-job.js';
import { writeCheckpoint, writeIntent } from './fenced-writes.js';
import type { StepIdentity } from './fenced-writes.js';
import { respondToJob } from './respond-to-job.js';
import type { RespondArgs, WaitDecision } from './respond-to-job.js';
import type { Job } from '../../job/job.js';
import { idempotencyHash, requestHash, sha256Hex } from '../../hash/idempotency-hash.js';
import { newJobId } from '../../ids.js';
import type { JobId, PrincipalId, TenantId, WorkerId } from '../../ids.js';
import type { ErrorInfo } from '../../errors/stepwise-error.js';

// respond_to_job's one guarded statement (DESIGN §7): a person decides about a waiting job.

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase('respond');
});

afterAll(async () => {
  await tdb?.drop();
});

const TENANT = 'acme' as TenantId;
const OTHER = 'globex' as TenantId;
const W1 = 'wrk_one_1_aaaa' as WorkerId;
const W2 = 'wrk_two_2_bbbb' as WorkerId;
const BOB = 'bob' as PrincipalId;
const LEASE_MS = 60_000;
const REASON = 'needs_confirmation';
const CANCELLED: ErrorInfo = { code: 'cancelled', category: 'cancelled', retryable: false, message: 'Rejected by bob.' };

let seq = 0;

function stepId(jobId: JobId, name: string, position: number): StepIdentity {
  return { name, position, effect: position === 0 ? 'none' : 'unsafe', attempt: 1, attemptGroup: 1, idempotencyKey: `${jobId}:${name}:1` };
}

/**
 * A job that checkpointed `fetch`, wrote the intent of the unsafe `charge` step, and was then
 * parked in `waiting` for confirmation, all through the real guarded statements.
 */
async function newWaitingJob(reason = REASON): Promise<Job> {
  const job = await insertTestJob(tdb.db, { tenantId: TENANT, plan: [{ name: 'fetch', effect: 'none' }, { name: 'charge', effect: 'unsafe' }] });
  const claimed = await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
  if (!claimed) throw new Error('claim failed');
  const f = { jobId: job.id, fence: claimed.job.leaseFence };
  await writeIntent(tdb.db, f, stepId(job.id, 'fetch', 0));
  await writeCheckpoint(tdb.db, f, {
    step: stepId(job.id, 'fetch', 0),
    output: { rows: 3 },
    outputSha256: sha256Hex(JSON.stringify({ rows: 3 })),
    startedAt: new Date(),
    stepsDone: 1,
    nextStep: 'charge',
    progress: { done: 1, total: 2, message: null },
  });
  await writeIntent(tdb.db, f, stepId(job.id, 'charge', 1));
  return finishJob(tdb.db, f, {
    to: 'waiting',
    workerId: W1,
    reason,
    waitingReason: reason,
    waitingDetails: { step: 'charge' },
  });
}

function args(job: Job, decision: WaitDecision, over: Partial<RespondArgs> = {}): RespondArgs {
  return {
    tenantId: TENANT,
    jobId: job.id,
    by: BOB,
    expectedReason: REASON,
    decision,
    note: 'checked by hand',
    record: { decision: decision.kind === 'resume' ? (decision.stepDone ? 'mark_done' : 'retry') : decision.kind === 'cancel' ? 'reject' : 'fail' },
    ...over,
  };
}

const retry = (): WaitDecision => ({ kind: 'resume', stepReset: { step: 'charge', to: 'pending' } });

async function step(jobId: JobId, name: string) {
  const [row] = await tdb.sql<{ status: string; output: unknown; output_sha256: string | null; finished: boolean }[]>`
    select status, output, output_sha256, finished_at is not null as finished from job_steps where job_id = ${jobId} and step_name = ${name}`;
  return row;
}

async function events(jobId: JobId) {
  return tdb.sql<{ kind: string; from_status: string | null; to_status: string | null; reason: string | null; version: number; details: unknown; worker_id: string | null }[]>`
    select kind, from_status, to_status, reason, version, details, worker_id from job_events where job_id = ${jobId} order by id`;
}

/** Everything a decision could touch, for before/after comparison. */
async function snapshot(jobId: JobId): Promise<unknown> {
  const [job] = await tdb.sql`select * from jobs where id = ${jobId}`;
  const steps = await tdb.sql`select * from job_steps where job_id = ${jobId} order by position`;
  const ev = await tdb.sql`select * from job_events where job_id = ${jobId} order by id`;
  return { job, steps, events: ev };
}

describe('respondToJob: resume', () => {
  it('with stepReset: sets resume_requested_at, resets the step to pending, and records the decision', async () => {
    const job = await newWaitingJob();
    expect(await step(job.id, 'charge')).toMatchObject({ status: 'started' });

    const decided = await respondToJob(tdb.db, args(job, retry()));
    expect(decided).not.toBeNull();
    expect(decided).toMatchObject({ id: job.id, status: 'waiting', waitingReason: REASON, version: job.version + 1, finishedAt: null, error: null });
    expect(decided?.resumeRequestedAt).toBeInstanceOf(Date);

    expect(await step(job.id, 'charge')).toMatchObject({ status: 'pending' });
    expect(await step(job.id, 'fetch')).toMatchObject({ status: 'succeeded', output: { rows: 3 } });

    const ev = await events(job.id);
    expect(ev.at(-1)).toEqual({
      kind: 'decision',
      from_status: 'waiting',
      to_status: 'waiting',
      reason: REASON,
      version: job.version + 1,
      details: { decision: 'retry', by: 'bob', note: 'checked by hand' },
      worker_id: null,
    });
  });

  it('with stepDone: checkpoints the step as succeeded with the given output', async () => {
    const job = await newWaitingJob();
    const output = { charged: true, amount: 42 };
    const outputSha256 = sha256Hex(JSON.stringify(output));
    const decided = await respondToJob(tdb.db, args(job, { kind: 'resume', stepDone: { step: 'charge', output, outputSha256 } }, { note: null }));
    expect(decided?.status).toBe('waiting');
    expect(decided?.resumeRequestedAt).toBeInstanceOf(Date);
    expect(await step(job.id, 'charge')).toEqual({ status: 'succeeded', output, output_sha256: outputSha256, finished: true });
    expect((await events(job.id)).at(-1)).toMatchObject({ kind: 'decision', details: { decision: 'mark_done', by: 'bob', note: null } });
  });

  it('without a step change: only sets resume_requested_at', async () => {
    const job = await newWaitingJob();
    const decided = await respondToJob(tdb.db, args(job, { kind: 'resume' }));
    expect(decided?.resumeRequestedAt).toBeInstanceOf(Date);
    expect(await step(job.id, 'charge')).toMatchObject({ status: 'started' });
  });

  it('after a resume, claimJob takes it waiting → running and clears waiting_reason and resume_requested_at', async () => {
    const job = await newWaitingJob();
    // Not claimable before anyone decided.
    expect(await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS })).toBeNull();

    await respondToJob(tdb.db, args(job, retry()));
    const claimed = await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS });
    expect(claimed).not.toBeNull();
    expect(claimed?.previousStatus).toBe('waiting');
    expect(claimed?.job).toMatchObject({
      status: 'running',
      leaseOwner: W2,
      leaseFence: job.leaseFence + 1,
      waitingReason: null,
      resumeRequestedAt: null,
      version: job.version + 2,
    });
    expect(claimed?.steps.map((s) => [s.name, s.status])).toEqual([
      ['fetch', 'succeeded'],
      ['charge', 'pending'],
    ]);
    const [row] = await tdb.sql`select waiting_reason, waiting_details, resume_requested_at from jobs where id = ${job.id}`;
    expect(row).toEqual({ waiting_reason: null, waiting_details: null, resume_requested_at: null });
    expect((await events(job.id)).at(-1)).toMatchObject({ kind: 'transition', from_status: 'waiting', to_status: 'running', worker_id: W2 });

    // Only one claim wins; the decision cannot be replayed now that the job runs.
    expect(await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS })).toBeNull();
    expect(await respondToJob(tdb.db, args(job, retry()))).toBeNull();
  });
});

describe('respondToJob: cancel and fail', () => {
  it('cancel moves waiting → cancelled with the error, at once', async () => {
    const job = await newWaitingJob();
    const decided = await respondToJob(tdb.db, args(job, { kind: 'cancel', error: CANCELLED }));
    expect(decided).toMatchObject({ status: 'cancelled', error: CANCELLED, version: job.version + 1, resumeRequestedAt: null });
    expect(decided?.finishedAt).toBeInstanceOf(Date);
    const ev = await events(job.id);
    expect(ev.at(-1)).toEqual({
      kind: 'decision',
      from_status: 'waiting',
      to_status: 'cancelled',
      reason: REASON,
      version: job.version + 1,
      details: { decision: 'reject', by: 'bob', note: 'checked by hand' },
      worker_id: null,
    });
    // The interrupted step is left as it was, and the job can no longer be claimed.
    expect(await step(job.id, 'charge')).toMatchObject({ status: 'started' });
    expect(await claimJob(tdb.db, { jobId: job.id, workerId: W2, leaseMs: LEASE_MS })).toBeNull();
  });

  it('fail moves waiting → failed with the error', async () => {
    const job = await newWaitingJob();
    const error: ErrorInfo = { code: 'operator_failed', category: 'internal', retryable: false, message: 'Failed by bob.' };
    const decided = await respondToJob(tdb.db, args(job, { kind: 'fail', error }));
    expect(decided).toMatchObject({ status: 'failed', error });
    expect(decided?.finishedAt).toBeInstanceOf(Date);
    expect((await events(job.id)).at(-1)).toMatchObject({ kind: 'decision', from_status: 'waiting', to_status: 'failed' });
  });
});

describe('respondToJob: refusals change nothing', () => {
  it('wrong expectedReason → null', async () => {
    const job = await newWaitingJob();
    const before = await snapshot(job.id);
    expect(await respondToJob(tdb.db, args(job, retry(), { expectedReason: 'needs_approval' }))).toBeNull();
    expect(await respondToJob(tdb.db, args(job, { kind: 'cancel', error: CANCELLED }, { expectedReason: 'needs_approval' }))).toBeNull();
    expect(await snapshot(job.id)).toEqual(before);
  });

  it('a job that is not waiting → null', async () => {
    const input = { steps: 1, n: seq++ };
    const { job } = await createJob(
      tdb.db,
      {
        id: newJobId(),
        tenantId: TENANT,
        principalId: 'alice' as PrincipalId,
        type: 'demo.steps',
        input,
        idempotencyKey: undefined,
        idempotencyHash: idempotencyHash(TENANT, 'demo.steps', input),
        requestHash: requestHash('demo.steps', input),
        dedupWindowMs: 86_400_000,
        plan: [{ name: 'charge', effect: 'unsafe' }],
        maxAttempts: 3,
        traceId: undefined,
      },
      { tenantId: TENANT, principalId: 'alice', action: 'start_job', outcome: 'success' },
    );
    // pending
    let before = await snapshot(job.id);
    expect(await respondToJob(tdb.db, args(job, retry()))).toBeNull();
    expect(await respondToJob(tdb.db, args(job, { kind: 'cancel', error: CANCELLED }))).toBeNull();
    expect(await snapshot(job.id)).toEqual(before);
    // running, even with a waiting_reason left behind by hand
    await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: LEASE_MS });
    await tdb.sql`update jobs set waiting_reason = ${REASON} where id = ${job.id}`;
    before = await snapshot(job.id);
    expect(await respondToJob(tdb.db, args(job, retry()))).toBeNull();
    expect(await snapshot(job.id)).toEqual(before);
  });

  it('another tenant → null, as for an unknown job', async () => {
    const job = await newWaitingJob();
    const before = await snapshot(job.id);
    expect(await respondToJob(tdb.db, args(job, retry(), { tenantId: OTHER }))).toBeNull();
    expect(await respondToJob(tdb.db, args(job, { kind: 'cancel', error: CANCELLED }, { tenantId: OTHER }))).toBeNull();
    expect(await respondToJob(tdb.db, args({ ...job, id: newJobId() }, retry()))).toBeNull();
    expect(await snapshot(job.id)).toEqual(before);
  });

  it('already decided → null; the first decision stands', async () => {
    const resumed = await newWaitingJob();
    await respondToJob(tdb.db, args(resumed, retry()));
    let before = await snapshot(resumed.id);
    expect(await respondToJob(tdb.db, args(resumed, retry()))).toBeNull();
    expect(await respondToJob(tdb.db, args(resumed, { kind: 'cancel', error: CANCELLED }))).toBeNull();
    expect(
      await respondToJob(tdb.db, args(resumed, { kind: 'resume', stepDone: { step: 'charge', output: { x: 1 }, outputSha256: sha256Hex('{"x":1}') } })),
    ).toBeNull();
    expect(await snapshot(resumed.id)).toEqual(before);

    const cancelled = await newWaitingJob();
    await respondToJob(tdb.db, args(cancelled, { kind: 'cancel', error: CANCELLED }));
    before = await snapshot(cancelled.id);
    expect(await respondToJob(tdb.db, args(cancelled, retry()))).toBeNull();
    expect(await respondToJob(tdb.db, args(cancelled, { kind: 'cancel', error: CANCELLED }))).toBeNull();
    expect(await snapshot(cancelled.id)).toEqual(before);
  });

  it('concurrent decisions: exactly one wins and one decision event is written', async () => {
    const job = await newWaitingJob();
    const results = await Promise.all([
      respondToJob(tdb.db, args(job, retry(), { by: 'bob' as PrincipalId })),
      respondToJob(tdb.db, args(job, { kind: 'cancel', error: CANCELLED }, { by: 'carol' as PrincipalId })),
      respondToJob(tdb.db, args(job, { kind: 'resume', stepDone: { step: 'charge', output: { y: 1 }, outputSha256: sha256Hex('{"y":1}') } }, { by: 'dave' as PrincipalId })),
    ]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect((await events(job.id)).filter((e) => e.kind === 'decision')).toHaveLength(1);
  });
});
