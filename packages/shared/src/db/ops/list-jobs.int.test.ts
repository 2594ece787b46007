import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createTestDatabase } from '../../testing/index.js';
import type { TestDatabase } from '../../testing/index.js';
import { createJob } from './create-job.js';
import { listJobs } from './list-jobs.js';
import { requestCancel } from './request-cancel.js';
import type { Job } from '../../job/job.js';
import { CancelledError } from '../../errors/cancelled-error.js';
import { idempotencyHash, requestHash } from '../../hash/idempotency-hash.js';
import { newJobId } from '../../ids.js';
import type { JobId, PrincipalId, TenantId } from '../../ids.js';

let tdb: TestDatabase;

const ACME = 'acme' as TenantId;
const GLOBEX = 'globex' as TenantId;
const EMPTY = 'initech' as TenantId;
const EVIL_TYPE = "demo.x'; drop table jobs; --";

const acmeDemo: Job[] = [];
const acmeFiles: Job[] = [];
const globexDemo: Job[] = [];
let evil: Job;

let seq = 0;
async function make(tenantId: TenantId, type: string, createdAt?: number): Promise<Job> {
  const input = { n: seq++ };
  const { job } = await createJob(
    tdb.db,
    {
      id: newJobId(createdAt),
      tenantId,
      principalId: 'alice' as PrincipalId,
      type,
      input,
      idempotencyKey: undefined,
      idempotencyHash: idempotencyHash(tenantId, type, input),
      requestHash: requestHash(type, input),
      dedupWindowMs: 86_400_000,
      plan: [{ name: 'only', effect: 'none' }],
      maxAttempts: 3,
      traceId: undefined,
    },
    { tenantId, principalId: 'alice', action: 'start_job', outcome: 'success' },
  );
  return job;
}

beforeAll(async () => {
  tdb = await createTestDatabase('list-jobs');
  // Spread creation times over distinct milliseconds so newest-first order is well defined,
  // plus a burst inside one millisecond for the keyset-pagination tie case.
  const t0 = Date.now() - 100_000;
  for (let i = 0; i < 20; i++) acmeDemo.push(await make(ACME, 'demo.steps', t0 + i * 10));
  for (let i = 0; i < 5; i++) acmeDemo.push(await make(ACME, 'demo.steps', t0 + 500));
  for (let i = 0; i < 3; i++) acmeFiles.push(await make(ACME, 'files.index', t0 + 1_000 + i));
  for (let i = 0; i < 4; i++) globexDemo.push(await make(GLOBEX, 'demo.steps', t0 + 2_000 + i));
  evil = await make(ACME, EVIL_TYPE, t0 + 3_000);
  // Cancel a few acme demo jobs so the status filter has something to find.
  for (const j of acmeDemo.slice(0, 3)) {
    await requestCancel(tdb.db, { tenantId: ACME, jobId: j.id, reason: null, error: new CancelledError().toInfo() });
  }
});

afterAll(async () => {
  await tdb?.drop();
});

const idsOf = (jobs: Job[]) => jobs.map((j) => j.id);
const desc = (ids: JobId[]) => [...ids].sort().reverse();

describe('listJobs', () => {
  it("returns only the tenant's own jobs, newest first", async () => {
    const { jobs, hasMore } = await listJobs(tdb.db, { tenantId: ACME, limit: 100 });
    expect(hasMore).toBe(false);
    expect(jobs.every((j) => j.tenantId === ACME)).toBe(true);
    const expected = [...acmeDemo, ...acmeFiles, evil].map((j) => j.id);
    expect(idsOf(jobs)).toEqual(desc(expected));
    expect(idsOf(jobs)).not.toContain(globexDemo[0]?.id);

    const g = await listJobs(tdb.db, { tenantId: GLOBEX, limit: 100 });
    expect(idsOf(g.jobs)).toEqual(desc(idsOf(globexDemo)));
  });

  it('a tenant without jobs sees an empty page', async () => {
    expect(await listJobs(tdb.db, { tenantId: EMPTY, limit: 10 })).toEqual({ jobs: [], hasMore: false });
  });

  it('filters by status', async () => {
    const cancelled = await listJobs(tdb.db, { tenantId: ACME, status: 'cancelled', limit: 100 });
    expect(idsOf(cancelled.jobs)).toEqual(desc(idsOf(acmeDemo.slice(0, 3))));
    expect(cancelled.jobs.every((j) => j.status === 'cancelled')).toBe(true);

    const pending = await listJobs(tdb.db, { tenantId: ACME, status: 'pending', limit: 100 });
    expect(pending.jobs).toHaveLength(acmeDemo.length - 3 + acmeFiles.length + 1);
    expect(pending.jobs.every((j) => j.status === 'pending')).toBe(true);

    expect((await listJobs(tdb.db, { tenantId: ACME, status: 'running', limit: 100 })).jobs).toEqual([]);
    expect((await listJobs(tdb.db, { tenantId: GLOBEX, status: 'cancelled', limit: 100 })).jobs).toEqual([]);
  });

  it('filters by type, and by type and status together', async () => {
    const files = await listJobs(tdb.db, { tenantId: ACME, type: 'files.index', limit: 100 });
    expect(idsOf(files.jobs)).toEqual(desc(idsOf(acmeFiles)));
    const both = await listJobs(tdb.db, { tenantId: ACME, type: 'demo.steps', status: 'pending', limit: 100 });
    expect(idsOf(both.jobs)).toEqual(desc(idsOf(acmeDemo.slice(3))));
    expect((await listJobs(tdb.db, { tenantId: ACME, type: 'files.index', status: 'cancelled', limit: 100 })).jobs).toEqual([]);
    // Type filters are tenant-scoped too.
    expect((await listJobs(tdb.db, { tenantId: GLOBEX, type: 'files.index', limit: 100 })).jobs).toEqual([]);
  });

  it('pages through 25 jobs with limit 10: no duplicates, no gaps, in order', async () => {
    const seen: JobId[] = [];
    const pages: { size: number; hasMore: boolean }[] = [];
    let before: JobId | undefined;
    for (let guard = 0; guard < 10; guard++) {
      const page = await listJobs(tdb.db, { tenantId: ACME, type: 'demo.steps', limit: 10, before });
      pages.push({ size: page.jobs.length, hasMore: page.hasMore });
      seen.push(...idsOf(page.jobs));
      if (!page.hasMore) break;
      before = page.jobs.at(-1)?.id;
    }
    expect(pages).toEqual([
      { size: 10, hasMore: true },
      { size: 10, hasMore: true },
      { size: 5, hasMore: false },
    ]);
    expect(new Set(seen).size).toBe(25);
    expect(seen).toEqual(desc(idsOf(acmeDemo)));
  });

  it('hasMore is false when the last page is exactly full', async () => {
    const first = await listJobs(tdb.db, { tenantId: GLOBEX, limit: 4 });
    expect(first.jobs).toHaveLength(4);
    expect(first.hasMore).toBe(false);
    const smaller = await listJobs(tdb.db, { tenantId: GLOBEX, limit: 3 });
    expect(smaller.hasMore).toBe(true);
    const rest = await listJobs(tdb.db, { tenantId: GLOBEX, limit: 3, before: smaller.jobs.at(-1)?.id });
    expect(rest).toMatchObject({ hasMore: false });
    expect(rest.jobs).toHaveLength(1);
  });

  it("a cursor from another tenant's job reveals nothing of that tenant", async () => {
    const page = await listJobs(tdb.db, { tenantId: ACME, limit: 100, before: globexDemo.at(-1)?.id });
    expect(page.jobs.every((j) => j.tenantId === ACME)).toBe(true);
  });

  it.each([
    ["demo.steps' or '1'='1", 0],
    ["' or 1=1 --", 0],
    ['%', 0],
    ['demo.%', 0],
    ['demo.step_', 0],
    ['_%', 0],
    ['*', 0],
    ['demo.steps\\', 0],
    ['demo.steps"; select 1; --', 0],
  ])('treats the type filter %j as a literal (no injection, no LIKE wildcards)', async (type, expected) => {
    const { jobs } = await listJobs(tdb.db, { tenantId: ACME, type, limit: 100 });
    expect(jobs).toHaveLength(expected);
  });

  it('finds a type containing SQL metacharacters by exact match, and the table survives', async () => {
    const { jobs } = await listJobs(tdb.db, { tenantId: ACME, type: EVIL_TYPE, limit: 100 });
    expect(idsOf(jobs)).toEqual([evil.id]);
    expect(jobs[0]?.type).toBe(EVIL_TYPE);
    const [row] = await tdb.sql`select count(*)::int as n from jobs`;
    expect(row?.n).toBe(acmeDemo.length + acmeFiles.length + globexDemo.length + 1);
  });

  it('ignores an empty type filter (no filter), as the op treats it as absent', async () => {
    const { jobs } = await listJobs(tdb.db, { tenantId: GLOBEX, type: '', limit: 100 });
    expect(jobs).toHaveLength(globexDemo.length);
  });
});
