import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createTestDatabase } from '../../testing/index.js';
import type { TestDatabase } from '../../testing/index.js';
import { createJob } from './create-job.js';
import type { NewJob } from './create-job.js';
import type { AuditRecord } from './append-audit.js';
import { idempotencyHash, requestHash } from '../../hash/idempotency-hash.js';
import { newJobId } from '../../ids.js';
import type { PrincipalId, TenantId } from '../../ids.js';
import { IdempotencyConflictError } from '../../errors/idempotency-conflict-error.js';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase('create-job');
});

afterAll(async () => {
  await tdb?.drop();
});

const PLAN = [
  { name: 'fetch', effect: 'none' as const },
  { name: 'store', effect: 'idempotent' as const },
];

function newJob(over: { tenant?: string; type?: string; input?: unknown; key?: string; dedupWindowMs?: number } = {}): NewJob {
  const tenantId = (over.tenant ?? 'acme') as TenantId;
  const type = over.type ?? 'demo.steps';
  const input = over.input ?? { steps: 2 };
  return {
    id: newJobId(),
    tenantId,
    principalId: 'alice' as PrincipalId,
    type,
    input,
    idempotencyKey: over.key,
    idempotencyHash: idempotencyHash(tenantId, type, input, over.key),
    requestHash: requestHash(type, input),
    dedupWindowMs: over.dedupWindowMs ?? 24 * 60 * 60 * 1000,
    plan: PLAN,
    maxAttempts: 3,
    traceId: 'trace-1',
  };
}

function audit(tenant = 'acme', requestId = 'req-1'): Omit<AuditRecord, 'targetJobId'> {
  return { tenantId: tenant, principalId: 'alice', action: 'start_job', outcome: 'success', requestId, argsDigest: 'd' };
}

async function counts(): Promise<{ jobs: number; events: number; audits: number }> {
  const [row] = await tdb.sql<{ jobs: number; events: number; audits: number }[]>`
    select (select count(*) from jobs)::int as jobs,
           (select count(*) from job_events)::int as events,
           (select count(*) from audit_events)::int as audits`;
  if (!row) throw new Error('no counts');
  return row;
}

describe('createJob', () => {
  it('creates a pending job with its created event and audit row', async () => {
    const nj = newJob({ input: { steps: 2, case: 'first' } });
    const before = await counts();
    const { job, created } = await createJob(tdb.db, nj, audit('acme', 'req-create'));
    expect(created).toBe(true);
    expect(job).toMatchObject({
      id: nj.id,
      tenantId: 'acme',
      principalId: 'alice',
      type: 'demo.steps',
      input: { steps: 2, case: 'first' },
      status: 'pending',
      version: 0,
      plan: PLAN,
      currentStep: 'fetch',
      stepsDone: 0,
      attempt: 1,
      maxAttempts: 3,
      leaseFence: 0,
      traceId: 'trace-1',
      dispatchId: nj.idempotencyHash,
      idempotencyKey: null,
    });
    expect(await counts()).toEqual({ jobs: before.jobs + 1, events: before.events + 1, audits: before.audits + 1 });

    const events = await tdb.sql`select kind, from_status, to_status, version, tenant_id from job_events where job_id = ${nj.id}`;
    expect(events).toEqual([{ kind: 'created', from_status: null, to_status: 'pending', version: 0, tenant_id: 'acme' }]);
    const audits = await tdb.sql`select action, outcome, request_id, principal_id from audit_events where target_job_id = ${nj.id}`;
    expect(audits).toEqual([{ action: 'start_job', outcome: 'success', request_id: 'req-create', principal_id: 'alice' }]);
    const [row] = await tdb.sql`select idempotency_hash, request_hash, dedup_expires_at > now() as in_window from jobs where id = ${nj.id}`;
    expect(row).toEqual({ idempotency_hash: nj.idempotencyHash, request_hash: nj.requestHash, in_window: true });
  });

  it('writes job, event and audit in ONE transaction: a failing audit insert leaves nothing behind', async () => {
    const nj = newJob({ input: { steps: 2, case: 'atomic' } });
    const before = await counts();
    const badAudit = { ...audit(), action: null as unknown as string }; // violates audit_events.action NOT NULL
    await expect(createJob(tdb.db, nj, badAudit)).rejects.toThrow();
    expect(await counts()).toEqual(before);
    expect(await tdb.sql`select id from jobs where id = ${nj.id}`).toHaveLength(0);
  });

  it('returns the existing job (created=false) for the same hash, writing only an audit row', async () => {
    const first = await createJob(tdb.db, newJob({ input: { steps: 2, case: 'dedup' } }), audit());
    const before = await counts();
    const again = newJob({ input: { case: 'dedup', steps: 2 } }); // same content, other key order, new id
    expect(again.idempotencyHash).toBe(first.job.dispatchId);
    const second = await createJob(tdb.db, again, audit('acme', 'req-again'));
    expect(second.created).toBe(false);
    expect(second.job.id).toBe(first.job.id);
    expect(second.job.id).not.toBe(again.id);
    expect(await counts()).toEqual({ ...before, audits: before.audits + 1 });
    const audits = await tdb.sql`select request_id from audit_events where target_job_id = ${first.job.id} order by id`;
    expect(audits.map((a) => a.request_id)).toEqual(['req-1', 'req-again']);
  });

  it('returns the existing job for the same explicit key and the same request', async () => {
    const a = await createJob(tdb.db, newJob({ key: 'order-7', input: { steps: 1 } }), audit());
    const b = await createJob(tdb.db, newJob({ key: 'order-7', input: { steps: 1 } }), audit());
    expect(a.created).toBe(true);
    expect(b.created).toBe(false);
    expect(b.job.id).toBe(a.job.id);
    expect(b.job.idempotencyKey).toBe('order-7');
  });

  it('rejects the same explicit key with a different request (IdempotencyConflictError) and writes nothing', async () => {
    const original = await createJob(tdb.db, newJob({ key: 'invoice-42', input: { steps: 2 } }), audit());
    const before = await counts();
    const clash = newJob({ key: 'invoice-42', input: { steps: 3 } });
    expect(clash.idempotencyHash).toBe(original.job.dispatchId);

    let thrown: unknown;
    try {
      await createJob(tdb.db, clash, audit('acme', 'req-clash'));
    } catch (e: unknown) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(IdempotencyConflictError);
    const err = thrown as IdempotencyConflictError;
    expect(err.category).toBe('conflict');
    expect(err.details).toEqual({ idempotencyKey: 'invoice-42', existingJobId: original.job.id });
    expect(err.message).toContain('invoice-42');

    expect(await counts()).toEqual(before);
    expect(await tdb.sql`select 1 from audit_events where request_id = 'req-clash'`).toHaveLength(0);
    const [row] = await tdb.sql`select input, version from jobs where id = ${original.job.id}`;
    expect(row).toEqual({ input: { steps: 2 }, version: 0 });
  });

  it('the same key for a different job type is a separate job (the hash includes the type)', async () => {
    const a = await createJob(tdb.db, newJob({ key: 'k-type', type: 'demo.steps' }), audit());
    const b = await createJob(tdb.db, newJob({ key: 'k-type', type: 'files.index' }), audit());
    expect(b.created).toBe(true);
    expect(b.job.id).not.toBe(a.job.id);
  });

  it('50 concurrent identical calls create exactly one job', async () => {
    const input = { steps: 5, case: 'concurrent' };
    const before = await counts();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => createJob(tdb.db, newJob({ input }), audit('acme', `req-c-${i}`))));
    const ids = new Set(results.map((r) => r.job.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const hash = idempotencyHash('acme' as TenantId, 'demo.steps', input);
    const rows = await tdb.sql`select id from jobs where dispatch_id = ${hash}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.id).toBe([...ids][0]);
    const after = await counts();
    expect(after.jobs).toBe(before.jobs + 1);
    expect(after.events).toBe(before.events + 1);
    expect(after.audits).toBe(before.audits + 50); // every call is audited, winners and losers
  });

  it('50 concurrent calls with the same explicit key but different inputs: one job, the rest conflict', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => createJob(tdb.db, newJob({ key: 'race-key', input: { steps: 1, n: i } }), audit())),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(1);
    expect(failed).toHaveLength(49);
    for (const f of failed) expect(f.reason).toBeInstanceOf(IdempotencyConflictError);
    expect(await tdb.sql`select id from jobs where idempotency_key = 'race-key'`).toHaveLength(1);
  });

  it('after the dedup window ends, the same hash creates a new job and the old row gives up its hash', async () => {
    const nj = newJob({ input: { steps: 2, case: 'expiry' } });
    const old = await createJob(tdb.db, nj, audit());
    await tdb.sql`update jobs set dedup_expires_at = now() - interval '1 second' where id = ${old.job.id}`;

    const fresh = await createJob(tdb.db, newJob({ input: { steps: 2, case: 'expiry' } }), audit());
    expect(fresh.created).toBe(true);
    expect(fresh.job.id).not.toBe(old.job.id);

    const rows = await tdb.sql`select id, idempotency_hash, dispatch_id from jobs where id in ${tdb.sql([old.job.id, fresh.job.id])}`;
    const byId = new Map(rows.map((r) => [r.id as string, r]));
    expect(byId.get(old.job.id)?.idempotency_hash).toBeNull();
    expect(byId.get(old.job.id)?.dispatch_id).toBe(nj.idempotencyHash); // kept: it is the BullMQ jobId
    expect(byId.get(fresh.job.id)?.idempotency_hash).toBe(nj.idempotencyHash);
    // The new job must not share the old one's BullMQ id, or its enqueue would be ignored.
    expect(byId.get(fresh.job.id)?.dispatch_id).toBe(`${nj.idempotencyHash}-${fresh.job.id}`);

    // And the new job now owns the slot.
    const third = await createJob(tdb.db, newJob({ input: { steps: 2, case: 'expiry' } }), audit());
    expect(third.created).toBe(false);
    expect(third.job.id).toBe(fresh.job.id);
  });

  it('after the window ends, the same explicit key with a different request is a new job, not a conflict', async () => {
    const old = await createJob(tdb.db, newJob({ key: 'reuse-later', input: { steps: 1 } }), audit());
    await tdb.sql`update jobs set dedup_expires_at = now() - interval '1 second' where id = ${old.job.id}`;
    const fresh = await createJob(tdb.db, newJob({ key: 'reuse-later', input: { steps: 9 } }), audit());
    expect(fresh.created).toBe(true);
    expect(fresh.job.input).toEqual({ steps: 9 });
  });

  it('a zero-length dedup window expires at once', async () => {
    const input = { steps: 1, case: 'zero-window' };
    const a = await createJob(tdb.db, newJob({ input, dedupWindowMs: 0 }), audit());
    const b = await createJob(tdb.db, newJob({ input, dedupWindowMs: 0 }), audit());
    expect(a.created).toBe(true);
    expect(b.created).toBe(true);
    expect(b.job.id).not.toBe(a.job.id);
  });

  it('two tenants with the same key and input get two jobs', async () => {
    const a = await createJob(tdb.db, newJob({ tenant: 'acme', key: 'shared-key' }), audit('acme'));
    const b = await createJob(tdb.db, newJob({ tenant: 'globex', key: 'shared-key' }), audit('globex'));
    expect(a.created).toBe(true);
    expect(b.created).toBe(true);
    expect(b.job.id).not.toBe(a.job.id);
    expect(a.job.tenantId).toBe('acme');
    expect(b.job.tenantId).toBe('globex');
  });

  it('the unique slot is per tenant even for an identical hash string', async () => {
    const hash = 'f'.repeat(64);
    const a = await createJob(tdb.db, { ...newJob({ tenant: 'acme' }), idempotencyHash: hash }, audit('acme'));
    const b = await createJob(tdb.db, { ...newJob({ tenant: 'globex' }), idempotencyHash: hash }, audit('globex'));
    expect(a.created && b.created).toBe(true);
    expect(a.job.id).not.toBe(b.job.id);
    const c = await createJob(tdb.db, { ...newJob({ tenant: 'acme' }), idempotencyHash: hash }, audit('acme'));
    expect(c).toMatchObject({ created: false, job: { id: a.job.id } });
  });
});
