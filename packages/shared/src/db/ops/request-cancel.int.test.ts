import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createTestDatabase } from '../../testing/index.js';
import type { TestDatabase } from '../../testing/index.js';
import { createJob } from './create-job.js';
import { claimJob } from './claim-job.js';
import { finishJob } from './finish-job.js';
import { requestCancel } from './request-cancel.js';
import type { Job } from '../../job/job.js';
import type { ErrorInfo } from '../../errors/stepwise-error.js';
import { CancelledError } from '../../errors/cancelled-error.js';
import { idempotencyHash, requestHash } from '../../hash/idempotency-hash.js';
import { newJobId } from '../../ids.js';
import type { JobId, PrincipalId, TenantId, WorkerId } from '../../ids.js';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase('request-cancel');
});

afterAll(async () => {
  await tdb?.drop();
});

const ACME = 'acme' as TenantId;
const GLOBEX = 'globex' as TenantId;
const W1 = 'wrk_one_1_aaaa' as WorkerId;
const CANCEL_INFO: ErrorInfo = new CancelledError('Cancelled: no longer needed').toInfo();

let seq = 0;
async function newPendingJob(tenantId: TenantId = ACME): Promise<Job> {
  const input = { steps: 1, n: seq++ };
  const { job } = await createJob(
    tdb.db,
    {
      id: newJobId(),
      tenantId,
      principalId: 'alice' as PrincipalId,
      type: 'demo.steps',
      input,
      idempotencyKey: undefined,
      idempotencyHash: idempotencyHash(tenantId, 'demo.steps', input),
      requestHash: requestHash('demo.steps', input),
      dedupWindowMs: 86_400_000,
      plan: [{ name: 'only', effect: 'none' }],
      maxAttempts: 3,
      traceId: undefined,
    },
    { tenantId, principalId: 'alice', action: 'start_job', outcome: 'success' },
  );
  return job;
}

async function runningJob(): Promise<Job> {
  const job = await newPendingJob();
  const claimed = await claimJob(tdb.db, { jobId: job.id, workerId: W1, leaseMs: 60_000 });
  if (!claimed) throw new Error('claim failed');
  return claimed.job;
}

async function snapshot(jobId: JobId): Promise<unknown> {
  const [job] = await tdb.sql`select * from jobs where id = ${jobId}`;
  const events = await tdb.sql`select * from job_events where job_id = ${jobId} order by id`;
  return { job, events };
}

async function lastEvent(jobId: JobId) {
  const rows = await tdb.sql`select kind, from_status, to_status, reason, version from job_events where job_id = ${jobId} order by id desc limit 1`;
  return rows[0];
}

const cancel = (jobId: JobId, tenantId: TenantId = ACME, reason: string | null = 'no longer needed') =>
  requestCancel(tdb.db, { tenantId, jobId, reason, error: CANCEL_INFO });

describe('requestCancel', () => {
  it('cancels a pending job at once and records the transition', async () => {
    const job = await newPendingJob();
    const r = await cancel(job.id);
    expect(r).not.toBeNull();
    expect(r?.effect).toBe('cancelled');
    expect(r?.previousStatus).toBe('pending');
    expect(r?.job).toMatchObject({ status: 'cancelled', cancelReason: 'no longer needed', error: CANCEL_INFO, version: 1 });
    expect(r?.job.finishedAt).toBeInstanceOf(Date);
    expect(r?.job.cancelRequestedAt).toBeInstanceOf(Date);
    expect(await lastEvent(job.id)).toEqual({ kind: 'transition', from_status: 'pending', to_status: 'cancelled', reason: 'no longer needed', version: 1 });

    const [row] = await tdb.sql`select status from jobs where id = ${job.id}`;
    expect(row?.status).toBe('cancelled');
  });

  it('a second request for a cancelled job returns null and changes nothing', async () => {
    const job = await newPendingJob();
    await cancel(job.id);
    const before = await snapshot(job.id);
    expect(await cancel(job.id, ACME, 'again')).toBeNull();
    expect(await snapshot(job.id)).toEqual(before);
  });

  it('on a running job sets cancel_requested_at, keeps it running and records a cancel_requested event', async () => {
    const job = await runningJob();
    const r = await cancel(job.id, ACME, 'user asked');
    expect(r?.effect).toBe('requested');
    expect(r?.previousStatus).toBe('running');
    expect(r?.job.status).toBe('running');
    expect(r?.job.cancelRequestedAt).toBeInstanceOf(Date);
    expect(r?.job.cancelReason).toBe('user asked');
    expect(r?.job.finishedAt).toBeNull();
    expect(r?.job.error).toBeNull();
    // The worker keeps its lease: it has to stop the step itself.
    expect(r?.job.leaseOwner).toBe(W1);
    expect(r?.job.leaseFence).toBe(job.leaseFence);
    expect(await lastEvent(job.id)).toMatchObject({ kind: 'cancel_requested', from_status: 'running', to_status: 'running', reason: 'user asked' });
  });

  it('a repeated request on a running job returns null: first request wins, no duplicate event', async () => {
    const job = await runningJob();
    const first = await cancel(job.id, ACME, 'first');
    const before = await snapshot(job.id);
    expect(await cancel(job.id, ACME, 'second')).toBeNull();
    expect(await snapshot(job.id)).toEqual(before);
    const evs = await tdb.sql`select kind from job_events where job_id = ${job.id} and kind = 'cancel_requested'`;
    expect(evs).toHaveLength(1);
    const [row] = await tdb.sql`select cancel_reason, cancel_requested_at from jobs where id = ${job.id}`;
    expect(row?.cancel_reason).toBe('first');
    // Raw postgres.js rows carry timestamps as text (drizzle's client parsers).
    const firstAt = first?.job.cancelRequestedAt?.getTime();
    expect(Number.isFinite(firstAt)).toBe(true);
    expect(new Date(String(row?.cancel_requested_at)).getTime()).toBe(firstAt);
  });

  it.each(['succeeded', 'failed'] as const)('a %s job returns null and changes nothing', async (to) => {
    const job = await runningJob();
    await finishJob(tdb.db, { jobId: job.id, fence: job.leaseFence }, { to, workerId: W1, reason: 'done', result: { ok: true } });
    const before = await snapshot(job.id);
    expect(await cancel(job.id)).toBeNull();
    expect(await snapshot(job.id)).toEqual(before);
  });

  it.each(['retrying', 'waiting'] as const)('a %s job (no worker holds it) is cancelled at once', async (to) => {
    const job = await runningJob();
    await finishJob(tdb.db, { jobId: job.id, fence: job.leaseFence }, {
      to,
      workerId: W1,
      reason: 'paused',
      ...(to === 'retrying' ? { nextRunAt: new Date(Date.now() + 60_000) } : { waitingReason: 'needs_confirmation' }),
    });
    const r = await cancel(job.id);
    expect(r?.effect).toBe('cancelled');
    expect(r?.previousStatus).toBe(to);
    expect(r?.job.status).toBe('cancelled');
    expect(r?.job.nextRunAt).toBeNull();
    expect(await lastEvent(job.id)).toMatchObject({ kind: 'transition', from_status: to, to_status: 'cancelled' });
  });

  it("another tenant's job reads as unknown: null, and nothing changes", async () => {
    const pending = await newPendingJob(ACME);
    const running = await runningJob();
    const beforePending = await snapshot(pending.id);
    const beforeRunning = await snapshot(running.id);
    expect(await cancel(pending.id, GLOBEX)).toBeNull();
    expect(await cancel(running.id, GLOBEX)).toBeNull();
    expect(await snapshot(pending.id)).toEqual(beforePending);
    expect(await snapshot(running.id)).toEqual(beforeRunning);
    // The owner can still cancel it.
    expect((await cancel(pending.id, ACME))?.effect).toBe('cancelled');
  });

  it('an unknown id returns null', async () => {
    expect(await cancel(newJobId())).toBeNull();
  });

  it('accepts a null reason', async () => {
    const job = await newPendingJob();
    const r = await cancel(job.id, ACME, null);
    expect(r?.job.cancelReason).toBeNull();
    expect(r?.job.status).toBe('cancelled');
  });

  it('concurrent requests on a running job: exactly one wins', async () => {
    const job = await runningJob();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => cancel(job.id, ACME, `r${i}`)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    const evs = await tdb.sql`select 1 from job_events where job_id = ${job.id} and kind = 'cancel_requested'`;
    expect(evs).toHaveLength(1);
  });
});
