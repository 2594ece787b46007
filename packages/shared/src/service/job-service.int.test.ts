import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
// @stepwise/jobs depends on @stepwise/shared, so shared cannot list it as a dependency and the
// bare specifier does not resolve from here; import the job type's source directly instead.
import { demoSteps } from '../../../jobs/src/demo-steps/index.js';
import { createTestDatabase, uniquePrefix } from '../testing/index.js';
import type { TestDatabase } from '../testing/index.js';
import { JobService } from './job-service.js';
import type { CallMeta } from './job-service.js';
import { JobRegistry } from '../job/job-registry.js';
import { createRedis } from '../queue/redis.js';
import { createJobQueue } from '../queue/job-queue.js';
import type { DispatchData } from '../queue/job-queue.js';
import { JobUpdateBus } from '../queue/job-update-bus.js';
import { channels } from '../queue/channels.js';
import type { JobUpdate } from '../queue/job-update.js';
import type { Principal, Scope } from '../auth/principal.js';
import type { Job } from '../job/job.js';
import { newJobId } from '../ids.js';
import type { JobId, PrincipalId, TenantId } from '../ids.js';
import { JobNotFoundError } from '../errors/job-not-found-error.js';
import { ForbiddenError } from '../errors/access-errors.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';
import { UnknownJobTypeError } from '../errors/unknown-job-type-error.js';
import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

let tdb: TestDatabase;
let prefix: string;
let queueConn: Redis;
let pub: Redis;
let sub: Redis;
let queue: Queue<DispatchData>;
let bus: JobUpdateBus;
let service: JobService;

const ALL: Scope[] = ['jobs:read', 'jobs:write', 'jobs:cancel'];
function principal(tenant: string, scopes: Scope[] = ALL, id = 'alice'): Principal {
  return { tenantId: tenant as TenantId, principalId: id as PrincipalId, scopes: new Set(scopes) };
}
const acme = principal('acme');
const globex = principal('globex', ALL, 'bob');
const meta: CallMeta = { requestId: 'req-test', clientName: 'vitest', clientVersion: '4' };

let seq = 0;
/** A fresh demo.steps input, so tests never dedup against each other by accident. */
const input = (over: Record<string, unknown> = {}) => ({ steps: 2, stepMs: seq++, ...over });

function ready(r: Redis): Promise<void> {
  return r.status === 'ready' ? Promise.resolve() : new Promise((resolve, reject) => {
    r.once('ready', () => resolve());
    r.once('error', reject);
  });
}

async function queueEntriesFor(jobId: JobId): Promise<number> {
  const entries = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children', 'completed', 'failed']);
  return entries.filter((e) => e?.data.jobId === jobId).length;
}

async function counts(): Promise<{ jobs: number; events: number; audits: number }> {
  const [row] = await tdb.sql<{ jobs: number; events: number; audits: number }[]>`
    select (select count(*) from jobs)::int as jobs,
           (select count(*) from job_events)::int as events,
           (select count(*) from audit_events)::int as audits`;
  if (!row) throw new Error('no counts');
  return row;
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e: unknown) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** Resolves once the bus's subscriber connection is subscribed to the job's channel. */
async function subscribed(tenantId: string, jobId: JobId): Promise<void> {
  const channel = channels.jobUpdates(prefix, tenantId as TenantId, jobId);
  for (let i = 0; i < 500; i++) {
    const [, n] = (await pub.pubsub('NUMSUB', channel)) as [string, number];
    if (Number(n) > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('never subscribed');
}

beforeAll(async () => {
  tdb = await createTestDatabase('job-service');
  prefix = uniquePrefix('job-service');
  queueConn = createRedis(REDIS_URL, { name: 'test-queue' });
  pub = createRedis(REDIS_URL, { name: 'test-pub' });
  sub = createRedis(REDIS_URL, { blocking: true, name: 'test-sub' });
  await Promise.all([ready(queueConn), ready(pub), ready(sub)]);
  queue = createJobQueue(queueConn, prefix);
  await queue.waitUntilReady();
  bus = new JobUpdateBus(pub, sub, prefix);
  service = new JobService(
    tdb.db,
    queue,
    bus,
    new JobRegistry([demoSteps]),
    { dedupWindowMs: 86_400_000, maxInputBytes: 10_000, maxInputDepth: 8 },
    pino({ level: 'silent' }),
  );
});

afterAll(async () => {
  await queue?.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  await Promise.all([queueConn?.quit(), pub?.quit(), sub?.quit()]);
  await tdb?.drop();
});

describe('JobService.start', () => {
  it('commits the job, then enqueues a BullMQ entry whose id is the dispatchId', async () => {
    const { job, deduplicated } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    expect(deduplicated).toBe(false);
    expect(job.status).toBe('pending');
    expect(job.tenantId).toBe('acme');
    expect(job.dispatchId).toMatch(/^[0-9a-f]{64}$/);

    // Visible to another connection: committed.
    const [row] = await tdb.sql`select status, type, tenant_id from jobs where id = ${job.id}`;
    expect(row).toEqual({ status: 'pending', type: 'demo.steps', tenant_id: 'acme' });
    const audits = await tdb.sql`select action, principal_id, client_name, request_id from audit_events where target_job_id = ${job.id}`;
    expect(audits).toEqual([{ action: 'start_job', principal_id: 'alice', client_name: 'vitest', request_id: 'req-test' }]);

    const entry = await queue.getJob(job.dispatchId);
    expect(entry).toBeDefined();
    expect(entry?.id).toBe(job.dispatchId);
    expect(entry?.data).toEqual({ jobId: job.id, tenantId: 'acme' });
    expect(await queueEntriesFor(job.id)).toBe(1);
  });

  it('stores the parsed input (defaults applied) and the frozen plan', async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input({ steps: 3 }) }, meta);
    expect(job.input).toMatchObject({ steps: 3, failWith: 'transient', effect: 'none' });
    expect(job.plan.map((s) => s.name)).toEqual(['step-001', 'step-002', 'step-003']);
    expect(job.maxAttempts).toBe(3);
  });

  it('deduplicates an identical call: same job, deduplicated=true, still one queue entry', async () => {
    const i = input();
    const first = await service.start(acme, { type: 'demo.steps', input: i }, meta);
    const second = await service.start(acme, { type: 'demo.steps', input: { ...i } }, meta);
    expect(second.deduplicated).toBe(true);
    expect(second.job.id).toBe(first.job.id);
    expect(await queueEntriesFor(first.job.id)).toBe(1);
    expect(await tdb.sql`select id from jobs where dispatch_id = ${first.job.dispatchId}`).toHaveLength(1);
  });

  it('a dedup hit re-enqueues a pending job whose queue entry was lost', async () => {
    const first = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    await queue.remove(first.job.dispatchId);
    expect(await queue.getJob(first.job.dispatchId)).toBeUndefined();
    const again = await service.start(acme, { type: 'demo.steps', input: first.job.input }, meta);
    expect(again.deduplicated).toBe(true);
    expect((await queue.getJob(first.job.dispatchId))?.data.jobId).toBe(first.job.id);
  });

  it('50 concurrent identical starts give one job and one queue entry', async () => {
    const i = input({ steps: 4 });
    const results = await Promise.all(Array.from({ length: 50 }, () => service.start(acme, { type: 'demo.steps', input: i, idempotencyKey: 'burst-1' }, meta)));
    const ids = new Set(results.map((r) => r.job.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => !r.deduplicated)).toHaveLength(1);
    const jobId = results[0]?.job.id as JobId;
    expect(await queueEntriesFor(jobId)).toBe(1);
    expect(await tdb.sql`select id from jobs where idempotency_key = 'burst-1'`).toHaveLength(1);
  });

  it('the same explicit key with a different input is an IdempotencyConflictError', async () => {
    await service.start(acme, { type: 'demo.steps', input: input(), idempotencyKey: 'conflict-1' }, meta);
    const before = await counts();
    const e = await caught(service.start(acme, { type: 'demo.steps', input: input(), idempotencyKey: 'conflict-1' }, meta));
    expect(e).toBeInstanceOf(IdempotencyConflictError);
    expect(await counts()).toEqual(before);
  });

  it('rejects invalid input before writing anything, with paths under input.', async () => {
    const before = await counts();
    const e = await caught(service.start(acme, { type: 'demo.steps', input: { steps: 0 } }, meta));
    expect(e).toBeInstanceOf(InvalidInputError);
    expect((e as InvalidInputError).issues.map((x) => x.path)).toEqual(['input.steps']);
    expect(await counts()).toEqual(before);
  });

  it('rejects oversized or over-deep input before parsing it', async () => {
    const big = await caught(service.start(acme, { type: 'demo.steps', input: { steps: 1, pad: 'x'.repeat(20_000) } }, meta));
    expect((big as InvalidInputError).code).toBe('payload_too_large');
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = { d: deep };
    const tooDeep = await caught(service.start(acme, { type: 'demo.steps', input: { steps: 1, deep } }, meta));
    expect((tooDeep as InvalidInputError).code).toBe('payload_too_deep');
  });

  it('rejects an unknown type', async () => {
    const e = await caught(service.start(acme, { type: 'demo.nope', input: {} }, meta));
    expect(e).toBeInstanceOf(UnknownJobTypeError);
  });
});

describe('JobService.cancel', () => {
  it('cancels a pending job at once, removes its queue entry, and is idempotent', async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    expect(await queue.getJob(job.dispatchId)).toBeDefined();

    const heard = new Promise<JobUpdate>((resolve) => {
      void bus.subscribe(acme.tenantId, job.id, resolve);
    });
    await subscribed('acme', job.id);

    const first = await service.cancel(acme, job.id, 'changed my mind', meta);
    expect(first.outcome).toBe('cancelled');
    expect(first.job.status).toBe('cancelled');
    expect(first.job.cancelReason).toBe('changed my mind');
    expect(await queue.getJob(job.dispatchId)).toBeUndefined();
    expect(await queueEntriesFor(job.id)).toBe(0);
    expect((await heard).status).toBe('cancelled');

    const audits = await tdb.sql`select action from audit_events where target_job_id = ${job.id} order by id`;
    expect(audits.map((a) => a.action)).toEqual(['start_job', 'cancel_job']);

    const second = await service.cancel(acme, job.id, 'again', meta);
    expect(second.outcome).toBe('already_finished');
    expect(second.job.status).toBe('cancelled');
    expect(second.job.cancelReason).toBe('changed my mind');
    const after = await tdb.sql`select action from audit_events where target_job_id = ${job.id}`;
    expect(after).toHaveLength(2); // nothing changed, so nothing more to audit
  });

  it('on a running job only requests cancellation and publishes a cancel notice', async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    await tdb.sql`update jobs set status = 'running', lease_owner = 'wrk_x', lease_fence = 1, lease_expires_at = now() + interval '1 minute' where id = ${job.id}`;
    const notices: { tenantId: string; jobId: string }[] = [];
    const heard = new Promise<void>((resolve) => {
      void bus.onCancel((tenantId, n) => {
        notices.push({ tenantId, jobId: n.jobId });
        if (n.jobId === job.id) resolve();
      });
    });
    // onCancel's psubscribe is awaited inside; give it a round-trip before publishing.
    for (let i = 0; i < 500; i++) {
      const n = (await pub.call('PUBSUB', 'NUMPAT')) as number;
      if (n > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const r = await service.cancel(acme, job.id, undefined, meta);
    expect(r.outcome).toBe('cancel_requested');
    expect(r.job.status).toBe('running');
    expect(r.job.cancelRequestedAt).toBeInstanceOf(Date);
    await heard;
    expect(notices).toContainEqual({ tenantId: 'acme', jobId: job.id });

    const again = await service.cancel(acme, job.id, undefined, meta);
    expect(again.outcome).toBe('cancel_requested');
    expect(again.job.status).toBe('running');
  });

  it("another tenant's job is not found and is left alone", async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    expect(await caught(service.cancel(globex, job.id, 'hijack', meta))).toBeInstanceOf(JobNotFoundError);
    expect((await service.get(acme, job.id)).status).toBe('pending');
    expect(await queue.getJob(job.dispatchId)).toBeDefined();
  });
});

describe('JobService.wait', () => {
  it('returns promptly once a worker publishes a terminal update', async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    const updates: JobUpdate[] = [];
    let gotProgress: () => void = () => {};
    const progressSeen = new Promise<void>((r) => (gotProgress = r));
    const waiting = service.wait(acme, job.id, 25_000, (u) => {
      updates.push(u);
      if (u.status === 'running') gotProgress();
    });
    await subscribed('acme', job.id);

    // Simulate a worker: progress first, then commit the final status in SQL and publish it.
    await bus.publishUpdate(acme.tenantId, { jobId: job.id, status: 'running', progress: { done: 1, total: 2, message: 'half' }, at: Date.now() });
    await progressSeen;
    await tdb.sql`update jobs set status = 'succeeded', result = ${JSON.stringify({ sum: 3 })}::jsonb, finished_at = now(), version = version + 1 where id = ${job.id}`;
    await bus.publishUpdate(acme.tenantId, { jobId: job.id, status: 'succeeded', progress: null, at: Date.now() });

    const done = await waiting;
    expect(done.id).toBe(job.id);
    expect(done.status).toBe('succeeded');
    expect(done.result).toEqual({ sum: 3 });
    expect(updates[0]).toMatchObject({ jobId: job.id, status: 'running', progress: { done: 1, total: 2, message: 'half' }, overall: null });
  });

  it('also returns when the job starts waiting for a decision', async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    const waiting = service.wait(acme, job.id, 25_000);
    await subscribed('acme', job.id);
    await tdb.sql`update jobs set status = 'waiting', waiting_reason = 'needs_approval' where id = ${job.id}`;
    await bus.publishUpdate(acme.tenantId, { jobId: job.id, status: 'waiting', progress: null, at: Date.now() });
    const j = await waiting;
    expect(j.status).toBe('waiting');
    expect(j.waitingReason).toBe('needs_approval');
  });

  it('returns the still-pending job at the deadline when nothing happens', async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    const j = await service.wait(acme, job.id, 300);
    expect(j.id).toBe(job.id);
    expect(j.status).toBe('pending');
    // The subscription was released.
    const [, n] = (await pub.pubsub('NUMSUB', channels.jobUpdates(prefix, acme.tenantId, job.id))) as [string, number];
    expect(Number(n)).toBe(0);
  });

  it('returns the job at once for waitMs 0 or a finished job', async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    expect((await service.wait(acme, job.id, 0)).status).toBe('pending');
    await service.cancel(acme, job.id, undefined, meta);
    expect((await service.wait(acme, job.id, 25_000)).status).toBe('cancelled');
  });

  it('stops waiting when the caller aborts', async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    const ac = new AbortController();
    const waiting = service.wait(acme, job.id, 25_000, undefined, ac.signal);
    await subscribed('acme', job.id);
    ac.abort();
    expect((await waiting).status).toBe('pending');
  });

  it("wait() on another tenant's job is not found, before any subscription", async () => {
    const { job } = await service.start(acme, { type: 'demo.steps', input: input() }, meta);
    expect(await caught(service.wait(globex, job.id, 1_000))).toBeInstanceOf(JobNotFoundError);
    const [, n] = (await pub.pubsub('NUMSUB', channels.jobUpdates(prefix, globex.tenantId, job.id))) as [string, number];
    expect(Number(n)).toBe(0);
  });
});

describe('JobService tenancy and scopes', () => {
  let job: Job;
  beforeAll(async () => {
    job = (await service.start(acme, { type: 'demo.steps', input: input() }, meta)).job;
  });

  it("get() of another tenant's job throws JobNotFoundError, exactly like an unknown id", async () => {
    const foreign = await caught(service.get(globex, job.id));
    const unknown = await caught(service.get(globex, newJobId()));
    expect(foreign).toBeInstanceOf(JobNotFoundError);
    expect(unknown).toBeInstanceOf(JobNotFoundError);
    expect((foreign as JobNotFoundError).code).toBe((unknown as JobNotFoundError).code);
    expect((foreign as JobNotFoundError).category).toBe('not_found');
    expect((await service.get(acme, job.id)).id).toBe(job.id);
  });

  it("steps() and list() never show another tenant's jobs", async () => {
    expect(await service.steps(globex, job.id)).toEqual([]);
    const { jobs } = await service.list(globex, { limit: 100 });
    expect(jobs.every((j) => j.tenantId === 'globex')).toBe(true);
    expect(jobs.map((j) => j.id)).not.toContain(job.id);
    const mine = await service.list(acme, { limit: 100 });
    expect(mine.jobs.map((j) => j.id)).toContain(job.id);
  });

  it('start without jobs:write is forbidden and writes nothing', async () => {
    const before = await counts();
    const e = await caught(service.start(principal('acme', ['jobs:read']), { type: 'demo.steps', input: input() }, meta));
    expect(e).toBeInstanceOf(ForbiddenError);
    expect((e as ForbiddenError).details).toEqual({ scope: 'jobs:write' });
    expect((e as ForbiddenError).category).toBe('forbidden');
    expect(await counts()).toEqual(before);
  });

  it('get, wait, steps and list without jobs:read are forbidden', async () => {
    const writer = principal('acme', ['jobs:write', 'jobs:cancel']);
    expect(await caught(service.get(writer, job.id))).toBeInstanceOf(ForbiddenError);
    expect(await caught(service.wait(writer, job.id, 0))).toBeInstanceOf(ForbiddenError);
    expect(await caught(service.steps(writer, job.id))).toBeInstanceOf(ForbiddenError);
    expect(await caught(service.list(writer, { limit: 10 }))).toBeInstanceOf(ForbiddenError);
  });

  it('cancel without jobs:cancel is forbidden and leaves the job alone', async () => {
    const e = await caught(service.cancel(principal('acme', ['jobs:read', 'jobs:write']), job.id, undefined, meta));
    expect(e).toBeInstanceOf(ForbiddenError);
    expect((e as ForbiddenError).details).toEqual({ scope: 'jobs:cancel' });
    expect((await service.get(acme, job.id)).status).toBe('pending');
  });

  it('with no scopes at all every call is forbidden', async () => {
    const nobody = principal('acme', []);
    expect(await caught(service.start(nobody, { type: 'demo.steps', input: input() }, meta))).toBeInstanceOf(ForbiddenError);
    expect(await caught(service.get(nobody, job.id))).toBeInstanceOf(ForbiddenError);
    expect(await caught(service.cancel(nobody, job.id, undefined, meta))).toBeInstanceOf(ForbiddenError);
  });

  it('the admin scope grants everything', async () => {
    const admin = principal('acme', ['admin'], 'root');
    expect((await service.get(admin, job.id)).id).toBe(job.id);
    const started = await service.start(admin, { type: 'demo.steps', input: input() }, meta);
    expect(started.job.principalId).toBe('root');
  });
});
