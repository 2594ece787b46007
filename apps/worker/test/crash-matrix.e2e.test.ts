import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EffectServer, Proc, Stack } from '@stepwise/testing';
import { connectHttpClient, sc, SERVER_MAIN, spawnNode, startEffectServer, startStack, startTcpProxy } from '@stepwise/testing';

// DESIGN §4, row by row: a worker process really SIGKILLs itself at the named point of the step
// protocol (STEPWISE_TEST_CRASH_AT), a fresh worker takes over, and we count the side effects an
// external HTTP endpoint saw per idempotency key.

const LEASE_MS = 1500;

describe('crash matrix (a worker is SIGKILLed at each step boundary)', () => {
  let stack: Stack;
  let dedupe: EffectServer; // honours Idempotency-Key, like a payments API
  let raw: EffectServer; // applies every call, like an API that cannot deduplicate

  beforeAll(async () => {
    stack = await startStack('stdio', { workers: 0, env: { STEPWISE_LEASE_MS: String(LEASE_MS), STEPWISE_SWEEP_INTERVAL_MS: '500' } });
    dedupe = await startEffectServer({ dedupe: true });
    raw = await startEffectServer({ dedupe: false });
  });
  afterEach(async () => {
    await Promise.all(stack.workers.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await stack?.close();
    await dedupe?.close();
    await raw?.close();
  });

  /** Starts a worker that dies at `crashAt`, runs a 3-step job until it does, then starts a clean worker. */
  async function crashThenRecover(crashAt: string, input: Record<string, unknown>): Promise<{ jobId: string; crashed: Proc }> {
    const crashed = await stack.startWorker({ STEPWISE_TEST_CRASH_AT: crashAt });
    // A fresh key per scenario: identical inputs would otherwise (rightly) dedupe to an earlier job.
    const started = sc(await stack.call('start_job', { type: 'demo.steps', input: { steps: 3, ...input }, idempotencyKey: `crash-${crashAt}-${Math.random()}` }));
    const exit = await crashed.exited;
    expect(exit.signal).toBe('SIGKILL');
    await stack.startWorker();
    return { jobId: started.jobId as string, crashed };
  }

  /** Until the job ends or needs a person (a `waiting` job with a decision recorded is resuming). */
  async function waitDone(jobId: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 4; i++) {
      const s = sc(await stack.call('get_job_status', { jobId, waitSeconds: 20, includeSteps: true }));
      if (['succeeded', 'failed', 'cancelled'].includes(s.status as string)) return s;
      if (s.status === 'waiting' && !s.resuming) return s;
    }
    throw new Error(`job ${jobId} did not settle`);
  }

  const key = (jobId: string, step: string) => `${jobId}:${step}:1`;

  it('before the intent: the step runs normally, once', async () => {
    const { jobId } = await crashThenRecover('before-intent:step-002', { effect: 'idempotent', effectUrl: raw.url });
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    for (const step of ['step-001', 'step-002', 'step-003']) expect(raw.get(key(jobId, step))).toEqual({ calls: 1, applied: 1 });
  });

  it('after the intent, effect none: the step runs again', async () => {
    const { jobId } = await crashThenRecover('after-intent:step-002', { effect: 'none', effectUrl: raw.url });
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    expect(raw.get(key(jobId, 'step-002')).calls).toBe(1); // the crash came before the call
  });

  it('after the call, effect none: the step runs again (its effect is declared harmless)', async () => {
    const { jobId } = await crashThenRecover('after-call:step-002', { effect: 'none', effectUrl: raw.url });
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    expect(raw.get(key(jobId, 'step-002')).calls).toBe(2);
    expect(raw.get(key(jobId, 'step-001')).calls).toBe(1); // checkpointed steps never re-run
  });

  it('after the call, effect idempotent: it runs again with the SAME key, so the effect applies once', async () => {
    const { jobId } = await crashThenRecover('after-call:step-002', { effect: 'idempotent', effectUrl: dedupe.url });
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    expect(dedupe.get(key(jobId, 'step-002'))).toEqual({ calls: 2, applied: 1 });
    expect(dedupe.all().size).toBe(3);
    const steps = s.steps as { name: string; idempotencyKey: string }[];
    expect(steps.find((x) => x.name === 'step-002')!.idempotencyKey).toBe(key(jobId, 'step-002'));
  });

  it('after the intent, effect unsafe with reconcile: reconcile says "not done", the step runs once', async () => {
    const { jobId } = await crashThenRecover('after-intent:step-002', { effect: 'unsafe', reconcile: true, effectUrl: raw.url });
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    expect(raw.get(key(jobId, 'step-002'))).toEqual({ calls: 1, applied: 1 });
  });

  it('after the call, effect unsafe with reconcile: reconcile finds the effect, nothing is called again', async () => {
    const { jobId } = await crashThenRecover('after-call:step-002', { effect: 'unsafe', reconcile: true, effectUrl: raw.url });
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    expect(raw.get(key(jobId, 'step-002'))).toEqual({ calls: 1, applied: 1 });
    expect(raw.get(key(jobId, 'step-003'))).toEqual({ calls: 1, applied: 1 });
  });

  it('after the call, effect unsafe without reconcile: waits for confirmation, never replays; mark_done continues', async () => {
    const { jobId } = await crashThenRecover('after-call:step-002', { effect: 'unsafe', effectUrl: raw.url });
    const s = await waitDone(jobId);
    expect(s).toMatchObject({ status: 'waiting', waitingReason: 'needs_confirmation', currentStep: 'step-002' });
    expect(raw.get(key(jobId, 'step-002')).calls).toBe(1);

    const decided = sc(
      await stack.call('respond_to_job', {
        jobId,
        decision: 'mark_done',
        output: { step: 2, attempt: 1, idempotencyKey: key(jobId, 'step-002'), sum: 3 },
        note: 'checked the endpoint: it was applied',
      }),
    );
    expect(decided.decision).toBe('mark_done');
    const done = await waitDone(jobId);
    expect(done.status).toBe('succeeded');
    expect(done.result).toMatchObject({ step: 3, sum: 6 });
    expect(raw.get(key(jobId, 'step-002')).calls).toBe(1);
    const [decision] = await stack.db.sql<{ details: { decision: string; by: string } }[]>`
      select details from job_events where job_id = ${jobId} and kind = 'decision'`;
    expect(decision!.details).toMatchObject({ decision: 'mark_done', by: 'local-operator' });
    const [audit] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from audit_events where target_job_id = ${jobId} and action = 'respond_to_job'`;
    expect(audit!.n).toBe(1);
  });

  it('after the intent, effect unsafe without reconcile: waits; retry runs the step once', async () => {
    const { jobId } = await crashThenRecover('after-intent:step-002', { effect: 'unsafe', effectUrl: raw.url });
    const s = await waitDone(jobId);
    expect(s).toMatchObject({ status: 'waiting', waitingReason: 'needs_confirmation' });
    expect(raw.get(key(jobId, 'step-002')).calls).toBe(0);
    await stack.call('respond_to_job', { jobId, decision: 'retry', note: 'not applied' });
    const done = await waitDone(jobId);
    expect(done.status).toBe('succeeded');
    expect(raw.get(key(jobId, 'step-002'))).toEqual({ calls: 1, applied: 1 });
  });

  it('after the checkpoint: recovery skips the finished step', async () => {
    const { jobId } = await crashThenRecover('after-checkpoint:step-002', { effect: 'unsafe', effectUrl: raw.url });
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    for (const step of ['step-001', 'step-002', 'step-003']) expect(raw.get(key(jobId, step))).toEqual({ calls: 1, applied: 1 });
  });

  it('the MCP server dies between commit and enqueue: the sweeper dispatches the committed job', async () => {
    await stack.startWorker();
    const server = spawnNode(SERVER_MAIN, ['--http'], { ...stack.env, STEPWISE_HTTP_PORT: '0', STEPWISE_TEST_CRASH_AT: 'after-commit:start_job' });
    const ready = await server.waitFor((l) => l.msg === 'mcp server listening');
    const client = await connectHttpClient(String(ready.url));
    const key = 'committed-not-enqueued';
    // The server dies mid-request; the SDK keeps trying to resume the stream, so bound the wait.
    await expect(
      client.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 2 }, idempotencyKey: key } }, undefined, { timeout: 5000 }),
    ).rejects.toThrow();
    await client.close().catch(() => undefined);
    expect((await server.exited).signal).toBe('SIGKILL');
    const [row] = await stack.db.sql<{ id: string }[]>`select id from jobs where idempotency_key = ${key}`;
    expect(row).toBeDefined();
    const s = await waitDone(row!.id);
    expect(s.status).toBe('succeeded');
  });

  async function heldBy(jobId: string): Promise<{ lease_owner: string | null; lease_fence: number; status: string }> {
    const [row] = await stack.db.sql<{ lease_owner: string | null; lease_fence: number; status: string }[]>`
      select lease_owner, lease_fence, status from jobs where id = ${jobId}`;
    return row!;
  }

  it('a worker gets SIGTERM: it finishes the running step, starts no new one, hands the job back, exits 0', async () => {
    const draining = await stack.startWorker({ STEPWISE_SHUTDOWN_GRACE_MS: '20000' });
    const started = sc(
      await stack.call('start_job', {
        type: 'demo.steps',
        input: { steps: 3, stepMs: 1500, effect: 'idempotent', effectUrl: dedupe.url },
        idempotencyKey: `sigterm-${Math.random()}`,
      }),
    );
    const jobId = started.jobId as string;
    for (let i = 0; i < 100 && (await heldBy(jobId)).lease_owner === null; i++) await new Promise((r) => setTimeout(r, 50));
    const held = await heldBy(jobId);
    draining.child.kill('SIGTERM');
    expect(await draining.exited).toEqual({ code: 0, signal: null });
    const [first] = await stack.db.sql<{ status: string; lease_fence: number }[]>`
      select status, lease_fence from job_steps where job_id = ${jobId} and step_name = 'step-001'`;
    expect(first).toEqual({ status: 'succeeded', lease_fence: held.lease_fence }); // finished by the draining worker
    const [later] = await stack.db.sql<{ n: number }[]>`
      select count(*)::int as n from job_steps where job_id = ${jobId} and step_name <> 'step-001'`;
    expect(later!.n).toBe(0); // no new step was started
    expect((await heldBy(jobId)).status).toBe('running'); // handed back, not failed

    await stack.startWorker();
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    for (const step of ['step-001', 'step-002', 'step-003']) expect(dedupe.get(key(jobId, step)).applied).toBe(1);
  });

  it('a worker gets SIGTERM and a step outlives the grace period: the step is stopped, the job is handed back', async () => {
    const draining = await stack.startWorker({ STEPWISE_SHUTDOWN_GRACE_MS: '300' });
    const started = sc(
      await stack.call('start_job', {
        type: 'demo.steps',
        input: { steps: 2, stepMs: 4000, effect: 'idempotent', effectUrl: dedupe.url },
        idempotencyKey: `sigterm-grace-${Math.random()}`,
      }),
    );
    const jobId = started.jobId as string;
    for (let i = 0; i < 100 && (await heldBy(jobId)).lease_owner === null; i++) await new Promise((r) => setTimeout(r, 50));
    draining.child.kill('SIGTERM');
    expect(await draining.exited).toEqual({ code: 0, signal: null });
    expect(await heldBy(jobId)).toMatchObject({ status: 'running', lease_owner: null }); // lease released at once
    await stack.startWorker();
    const s = await waitDone(jobId);
    expect(s.status).toBe('succeeded');
    for (const step of ['step-001', 'step-002']) expect(dedupe.get(key(jobId, step)).applied).toBe(1);
  });

  it('Postgres is unreachable: start_job returns a retryable error and writes nothing; it works again after', async () => {
    const pg = new URL(stack.db.url);
    const proxy = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
    const proxied = new URL(stack.db.url);
    proxied.port = String(proxy.port);
    const server = spawnNode(SERVER_MAIN, ['--http'], { ...stack.env, DATABASE_URL: proxied.toString(), STEPWISE_HTTP_PORT: '0' });
    try {
      const ready = await server.waitFor((l) => l.msg === 'mcp server listening');
      const base = String(ready.url).replace(/\/mcp$/, '');
      const client = await connectHttpClient(String(ready.url));
      const args = { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: `pg-down-${Math.random()}` };
      expect((await fetch(`${base}/readyz`)).status).toBe(200);

      proxy.cut();
      const before = await stack.counts();
      const failed = await client.callTool({ name: 'start_job', arguments: args });
      expect(failed.isError).toBe(true);
      expect(failed.structuredContent).toMatchObject({ category: 'transient', retryable: true, code: 'postgres_unavailable' });
      expect(await stack.counts()).toEqual(before);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);

      proxy.restore();
      const ok = await client.callTool({ name: 'start_job', arguments: args });
      expect(ok.isError).toBeFalsy();
      expect(ok.structuredContent).toMatchObject({ deduplicated: false, status: 'pending' });
      await client.close();
    } finally {
      await server.stop();
      await proxy.close();
    }
  });
});
