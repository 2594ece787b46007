import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobQueue, createRedis, newJobId, sha256Hex } from '@stepwise/shared';
import type { Stack } from '@stepwise/testing';
import { sc, startStack } from '@stepwise/testing';

// DESIGN §4, "before a job resumes, recovery checks again": jobs written by an older deployment
// (inserted here straight into Postgres, with no queue entry) are dispatched by a real worker's
// sweeper, and the worker refuses to run any whose type, input or plan no longer holds today.

// The stdio server's principal, so get_job_status can show these jobs too.
const TENANT = 'local';
const PRINCIPAL = 'local-operator';

describe('recovery re-validation (real worker, rows from an older deployment)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack('stdio', { workers: 1, env: { STEPWISE_SWEEP_INTERVAL_MS: '500' } });
  });
  afterAll(async () => {
    await stack?.close();
    if (!stack) return;
    // Leave nothing behind in Redis under this stack's prefix.
    const conn = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { blocking: true, name: 'recovery-validation-cleanup' });
    const queue = createJobQueue(conn, stack.prefix);
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
      await conn.quit();
    }
  });

  /**
   * Inserts a `pending` job the way createJob would have, minus the enqueue, and old enough that
   * the sweeper does not wait for an enqueue still in flight.
   */
  async function insertLegacyJob(type: string, input: unknown, planNames: string[], principal: string = PRINCIPAL): Promise<string> {
    const id = newJobId();
    const canonical = JSON.stringify(input);
    const hash = sha256Hex(`legacy|${id}|${canonical}`);
    const plan = planNames.map((name) => ({ name, effect: 'none' }));
    await stack.db.sql.begin(async (tx) => {
      await tx`
        insert into jobs (id, tenant_id, principal_id, type, input, idempotency_key, idempotency_hash, request_hash,
                          dispatch_id, dedup_expires_at, plan, max_attempts, current_step, expires_at, created_at, updated_at)
        values (${id}, ${TENANT}, ${principal}, ${type}, ${JSON.stringify(input)}::jsonb, null, ${hash}, ${sha256Hex(`${type}|${canonical}`)},
                ${hash}, now() + interval '1 day', ${JSON.stringify(plan)}::jsonb, 3, ${planNames[0] ?? null}, now() + interval '7 days',
                now() - interval '1 minute', now() - interval '1 minute')`;
      await tx`
        insert into job_events (job_id, tenant_id, kind, to_status, version, at)
        values (${id}, ${TENANT}, 'created', 'pending', 0, now() - interval '1 minute')`;
    });
    return id;
  }

  async function waitTerminal(id: string, timeoutMs = 30_000): Promise<{ status: string; error: { code: string; category: string; message: string; details?: unknown } | null }> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await stack.db.sql<{ status: string; error: { code: string; category: string; message: string; details?: unknown } | null }[]>`
        select status, error from jobs where id = ${id}`;
      if (row && ['succeeded', 'failed', 'cancelled'].includes(row.status)) return row;
      if (Date.now() > until) throw new Error(`job ${id} still ${row?.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function events(id: string) {
    return stack.db.sql<{ kind: string; from_status: string | null; to_status: string | null; reason: string | null; worker_id: string | null; details: unknown }[]>`
      select kind, from_status, to_status, reason, worker_id, details from job_events where job_id = ${id} order by id`;
  }

  async function stepCount(id: string): Promise<number> {
    const [row] = await stack.db.sql<{ n: number }[]>`select count(*)::int as n from job_steps where job_id = ${id}`;
    return row?.n ?? -1;
  }

  /** Asserts the job failed for `code` before any step ran, with the transitions recorded. */
  async function expectRefused(id: string, code: string, category: string) {
    const done = await waitTerminal(id);
    expect(done.status, `${code} job`).toBe('failed');
    expect(done.error).toMatchObject({ code, category, retryable: false });
    expect(done.error?.message.length).toBeGreaterThan(10);

    // created → running (the claim) → failed, recorded as transitions; the reason is the code.
    const ev = await events(id);
    expect(ev.map((e) => [e.kind, e.from_status, e.to_status])).toEqual([
      ['created', null, 'pending'],
      ['transition', 'pending', 'running'],
      ['transition', 'running', 'failed'],
    ]);
    const failed = ev.at(-1);
    expect(failed?.reason).toBe(code);
    expect(failed?.worker_id).toMatch(/^wrk_/);
    expect(failed?.details).toMatchObject({ error: { code } });
    // Nothing ran: no step was started or checkpointed.
    expect(await stepCount(id)).toBe(0);
    return done;
  }

  it('a job whose type no longer exists fails with unknown_job_type', async () => {
    const id = await insertLegacyJob('gone.type', { anything: true }, ['only-step']);
    const done = await expectRefused(id, 'unknown_job_type', 'invalid_input');
    expect(done.error?.message).toContain('gone.type');
    expect(done.error?.details).toMatchObject({ type: 'gone.type', known: expect.arrayContaining(['demo.steps']) });
  });

  it('a job whose stored input no longer parses fails with invalid_input', async () => {
    const id = await insertLegacyJob('demo.steps', { steps: 'three' }, ['step-001', 'step-002', 'step-003']);
    const done = await expectRefused(id, 'invalid_input', 'invalid_input');
    expect(done.error?.details).toMatchObject({
      issues: expect.arrayContaining([expect.objectContaining({ path: 'input.steps' })]),
    });
  });

  it('a job whose principal was disabled since it started fails with principal_disabled', async () => {
    await stack.db.sql`
      insert into principals (id, tenant_id, name, scopes, disabled_at)
      values ('prn_disabled_in_test', ${TENANT}, 'gone-user', ${['jobs:read', 'jobs:write']}, now())`;
    const id = await insertLegacyJob('demo.steps', { steps: 1 }, ['step-001'], 'prn_disabled_in_test');
    await expectRefused(id, 'principal_disabled', 'forbidden');
  });

  it('a job whose principal lost the scope to run it fails with principal_not_authorized', async () => {
    await stack.db.sql`
      insert into principals (id, tenant_id, name, scopes)
      values ('prn_readonly_in_test', ${TENANT}, 'read-only-now', ${['jobs:read']})`;
    const id = await insertLegacyJob('demo.steps', { steps: 1 }, ['step-001'], 'prn_readonly_in_test');
    await expectRefused(id, 'principal_not_authorized', 'forbidden');
  });

  it('a job whose stored plan differs from today\'s plan fails with plan_changed', async () => {
    const id = await insertLegacyJob('demo.steps', { steps: 2 }, ['step-001', 'step-002', 'step-003']);
    const done = await expectRefused(id, 'plan_changed', 'internal');
    expect(done.error?.details).toEqual({ started: ['step-001', 'step-002', 'step-003'], now: ['step-001', 'step-002'] });
    // The failure is what a caller sees, too.
    const status = sc(await stack.call('get_job_status', { jobId: id }));
    expect(status).toMatchObject({ status: 'failed', error: { code: 'plan_changed' } });
  });

  it('a row written the same way that still matches today\'s code runs to the end (control)', async () => {
    const id = await insertLegacyJob('demo.steps', { steps: 2, stepMs: 1 }, ['step-001', 'step-002']);
    const done = await waitTerminal(id);
    expect(done.status).toBe('succeeded');
    expect(await stepCount(id)).toBe(2);
  });

  it('refused jobs are terminal: later sweeps never dispatch them again', async () => {
    const ids = [
      await insertLegacyJob('gone.type', { again: true }, ['only-step']),
      await insertLegacyJob('demo.steps', { steps: 'four' }, ['step-001']),
      await insertLegacyJob('demo.steps', { steps: 1 }, ['step-001', 'step-002']),
    ];
    for (const id of ids) expect((await waitTerminal(id)).status).toBe('failed');
    const before = await Promise.all(ids.map((id) => events(id)));
    await new Promise((r) => setTimeout(r, 2000)); // several sweep intervals
    expect(await Promise.all(ids.map((id) => events(id)))).toEqual(before);
  });
});
