import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { demoSteps } from '../../../jobs/src/demo-steps/index.js';
import { createTestDatabase, uniquePrefix } from '../testing/index.js';
import type { TestDatabase } from '../testing/index.js';
import { JobService } from './job-service.js';
import type { CallMeta, StartQuota } from './job-service.js';
import { JobRegistry } from '../job/job-registry.js';
import { createRedis } from '../queue/redis.js';
import { createJobQueue } from '../queue/job-queue.js';
import type { DispatchData } from '../queue/job-queue.js';
import { JobUpdateBus } from '../queue/job-update-bus.js';
import type { Principal } from '../auth/principal.js';
import type { PrincipalId, TenantId } from '../ids.js';
import { RateLimitedError } from '../errors/rate-limited-error.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let tdb: TestDatabase;
let conns: Redis[] = [];
let queue: Queue<DispatchData>;
let bus: JobUpdateBus;
const meta = (): CallMeta => ({ requestId: 'req-quota' });
const who = (tenant: string, id: string): Principal => ({ tenantId: tenant as TenantId, principalId: id as PrincipalId, scopes: new Set(['jobs:read', 'jobs:write', 'jobs:cancel']) });

function service(quota: StartQuota): JobService {
  return new JobService(tdb.db, queue, bus, new JobRegistry([demoSteps]), { dedupWindowMs: 86_400_000, maxInputBytes: 10_000, maxInputDepth: 8, quota }, pino({ level: 'silent' }));
}

async function refusal(p: Promise<unknown>): Promise<RateLimitedError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(RateLimitedError);
  return e as RateLimitedError;
}

let seq = 0;
const input = () => ({ steps: 1, stepMs: seq++ });

beforeAll(async () => {
  tdb = await createTestDatabase('quota');
  const prefix = uniquePrefix('quota');
  conns = [createRedis(REDIS_URL, { name: 'q' }), createRedis(REDIS_URL, { name: 'p' }), createRedis(REDIS_URL, { blocking: true, name: 's' })];
  queue = createJobQueue(conns[0]!, prefix);
  await queue.waitUntilReady();
  bus = new JobUpdateBus(conns[1]!, conns[2]!, prefix);
});
afterAll(async () => {
  await queue?.obliterate({ force: true }).catch(() => undefined);
  await queue?.close();
  await Promise.all(conns.map((c) => c.quit()));
  await tdb?.drop();
});

describe('start_job quotas', () => {
  it('refuses a principal over its active-jobs limit with rate_limited, but still answers its dedup hits', async () => {
    const svc = service({ maxActiveJobs: 2, startsPerMinute: 100 });
    const alice = who('acme', 'alice-active');
    const first = await svc.start(alice, { type: 'demo.steps', input: input(), idempotencyKey: 'k1' }, meta());
    await svc.start(alice, { type: 'demo.steps', input: input() }, meta());
    const before = await tdb.sql<{ n: number }[]>`select count(*)::int as n from jobs`;
    const e = await refusal(svc.start(alice, { type: 'demo.steps', input: input() }, meta()));
    expect(e.code).toBe('rate_limited');
    expect(e.toInfo().retryAfterMs).toBeGreaterThan(0);
    expect(await tdb.sql<{ n: number }[]>`select count(*)::int as n from jobs`).toEqual(before); // nothing written
    // The retried call of the first start gets its job back although alice is at her limit.
    const again = await svc.start(alice, { type: 'demo.steps', input: first.job.input, idempotencyKey: 'k1' }, meta());
    expect(again).toMatchObject({ deduplicated: true, job: { id: first.job.id } });
    // Another principal (and another tenant) is not affected by alice's usage.
    await svc.start(who('acme', 'bob-active'), { type: 'demo.steps', input: input() }, meta());
    await svc.start(who('globex', 'alice-active'), { type: 'demo.steps', input: input() }, meta());
    // A finished job frees its slot.
    await svc.cancel(alice, first.job.id, 'make room', meta());
    await svc.start(alice, { type: 'demo.steps', input: input() }, meta());
  });

  it('refuses starts over the per-minute rate with retryAfterMs until the window frees', async () => {
    const svc = service({ maxActiveJobs: 1000, startsPerMinute: 3 });
    const carol = who('acme', 'carol-rate');
    for (let i = 0; i < 3; i++) await svc.start(carol, { type: 'demo.steps', input: input() }, meta());
    const e = await refusal(svc.start(carol, { type: 'demo.steps', input: input() }, meta()));
    const after = e.toInfo().retryAfterMs ?? 0;
    expect(after).toBeGreaterThan(50_000);
    expect(after).toBeLessThanOrEqual(60_000);
    expect(e.message).toMatch(/limit is 3/);
  });
});
