import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '@stepwise/testing';
import { connectHttpClient, sc, SERVER_MAIN, spawnNode, startStack } from '@stepwise/testing';

// Issue #4 end to end: every error category driven through a real worker and the SDK client,
// retries with their attempts and next retry time, timeouts, deadlines, approvals (also across
// restarts), and retry_job.

type Payload = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test payloads are asserted field by field

describe('failure handling and the human in the loop', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack('stdio', { workers: 1, env: { STEPWISE_SWEEP_INTERVAL_MS: '500' } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const start = async (input: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Payload> =>
    sc(await stack.call('start_job', { type: 'demo.steps', input, idempotencyKey: `f-${Math.random()}`, ...extra }));
  const status = async (jobId: string, waitSeconds = 0): Promise<Payload> =>
    sc(await stack.call('get_job_status', { jobId, waitSeconds, includeSteps: true }));
  async function settled(jobId: string): Promise<Payload> {
    for (let i = 0; i < 6; i++) {
      const s = await status(jobId, 20);
      if (['succeeded', 'failed', 'cancelled'].includes(s.status) || (s.status === 'waiting' && !s.resuming)) return s;
    }
    throw new Error(`job ${jobId} did not settle`);
  }
  const transitions = async (jobId: string) =>
    stack.db.sql<{ kind: string; from_status: string | null; to_status: string | null; reason: string | null }[]>`
      select kind, from_status, to_status, reason from job_events where job_id = ${jobId} order by id`;

  describe('each error category, thrown by a step', () => {
    it.each(['transient', 'rate_limited', 'timeout'] as const)('%s is retried and then succeeds', async (category) => {
      const job = await start({ steps: 2, failAt: 2, failWith: category, failTimes: 1 });
      const s = await settled(job.jobId);
      expect(s.status).toBe('succeeded');
      expect(s.result).toMatchObject({ step: 2, attempt: 2 });
      const ev = await transitions(job.jobId);
      expect(ev.filter((e) => e.to_status === 'retrying').map((e) => e.reason)).toEqual([`demo_${category}`]);
    });

    it('a retryable error that keeps happening fails the job after maxAttempts', async () => {
      const job = await start({ steps: 1, failAt: 1, failWith: 'transient' });
      const s = await settled(job.jobId);
      expect(s).toMatchObject({ status: 'failed', attempt: 3, maxAttempts: 3, error: { category: 'transient', retryable: true } });
      expect((await transitions(job.jobId)).filter((e) => e.to_status === 'retrying')).toHaveLength(2);
    });

    it.each(['invalid_input', 'forbidden', 'not_found', 'conflict', 'internal'] as const)('%s fails at once, without retries', async (category) => {
      const job = await start({ steps: 2, failAt: 1, failWith: category });
      const s = await settled(job.jobId);
      expect(s).toMatchObject({ status: 'failed', attempt: 1, error: { category, code: `demo_${category}`, retryable: false } });
      expect(s.summary).toContain(category);
      expect((await transitions(job.jobId)).some((e) => e.to_status === 'retrying')).toBe(false);
    });

    it('unauthorized waits for re-authorization; respond_to_job retry resumes it', async () => {
      const job = await start({ steps: 2, failAt: 2, failWith: 'unauthorized', failTimes: 1 });
      const waiting = await settled(job.jobId);
      expect(waiting).toMatchObject({ status: 'waiting', waitingReason: 'needs_reauthorization', error: { category: 'unauthorized' } });
      const r = sc(await stack.call('respond_to_job', { jobId: job.jobId, decision: 'retry', note: 'token refreshed' }));
      expect(r).toMatchObject({ decision: 'retry', resuming: true });
      expect((await settled(job.jobId)).status).toBe('succeeded');
    });

    it('cancelled ends the job as cancelled', async () => {
      const job = await start({ steps: 2, failAt: 1, failWith: 'cancelled' });
      expect(await settled(job.jobId)).toMatchObject({ status: 'cancelled', error: { category: 'cancelled' } });
    });

    it('get_job_status shows a retrying job\'s attempt, next retry time and last error', async () => {
      const job = await start({ steps: 1, failAt: 1, failWith: 'rate_limited', failTimes: 1, retryAfterMs: 3000 });
      let s: Payload = job;
      for (let i = 0; i < 60 && s.status !== 'retrying'; i++) {
        await sleep(50);
        s = await status(job.jobId);
      }
      expect(s).toMatchObject({ status: 'retrying', attempt: 2, maxAttempts: 3, error: { category: 'rate_limited', retryAfterMs: 3000 } });
      expect(Date.parse(s.nextRetryAt)).toBeGreaterThan(Date.now());
      expect(s.pollAfterMs).toBeGreaterThanOrEqual(1000);
      expect(s.summary).toMatch(/attempt 2\/3/);
      expect((await settled(job.jobId)).status).toBe('succeeded');
    });
  });

  it('a step slower than its timeoutMs fails with category timeout after the retries', async () => {
    const job = await start({ steps: 1, stepMs: 3000, timeoutMs: 150 });
    expect(await settled(job.jobId)).toMatchObject({ status: 'failed', attempt: 3, error: { category: 'timeout', code: 'step_timeout' } });
  });

  it('a job past its deadline is stopped, running step included', async () => {
    const failed = await start({ steps: 3, stepMs: 2000 }, { deadlineSeconds: 1 });
    expect(await settled(failed.jobId)).toMatchObject({ status: 'failed', error: { code: 'deadline_exceeded', category: 'timeout' } });
    const cancelled = await start({ steps: 3, stepMs: 2000 }, { deadlineSeconds: 1, onDeadline: 'cancel' });
    expect(await settled(cancelled.jobId)).toMatchObject({ status: 'cancelled', error: { code: 'deadline_exceeded' } });
  });

  describe('approvals', () => {
    it('a step declared approval: required waits with what it is about to do; approve runs it', async () => {
      const job = await start({ steps: 3, approveAt: 2 });
      const w = await settled(job.jobId);
      expect(w).toMatchObject({ status: 'waiting', waitingReason: 'needs_approval', currentStep: 'step-002', stepsDone: 1 });
      expect(w.waitingDetails).toMatchObject({ step: 'step-002', action: 'run demo step 2 of 3', parameters: { step: 2 }, impact: expect.any(String) });
      const r = sc(await stack.call('respond_to_job', { jobId: job.jobId, decision: 'approve', note: 'looks fine' }));
      expect(r.decision).toBe('approve');
      const done = await settled(job.jobId);
      expect(done.status).toBe('succeeded');
      const step2 = (done.steps as Payload[]).find((s) => s.name === 'step-002');
      expect(step2).toMatchObject({ status: 'succeeded' });
      const [audit] = await stack.db.sql<{ n: number }[]>`
        select count(*)::int as n from audit_events where target_job_id = ${job.jobId} and action = 'respond_to_job'`;
      expect(audit!.n).toBe(1);
    });

    it('reject cancels the job with the reason recorded, and the step never runs', async () => {
      const job = await start({ steps: 2, approveAt: 1 });
      await settled(job.jobId);
      await stack.call('respond_to_job', { jobId: job.jobId, decision: 'reject', note: 'not today' });
      const s = await settled(job.jobId);
      expect(s).toMatchObject({ status: 'cancelled', stepsDone: 0, error: { code: 'approval_rejected' } });
      expect(s.error.message).toContain('not today');
    });

    it('ctx.requestApproval from inside a step waits; after approval the step re-runs and passes', async () => {
      const job = await start({ steps: 2, requestApprovalAt: 1 });
      expect(await settled(job.jobId)).toMatchObject({ status: 'waiting', waitingReason: 'needs_approval', waitingDetails: { action: 'finish demo step 1' } });
      await stack.call('respond_to_job', { jobId: job.jobId, decision: 'approve' });
      expect((await settled(job.jobId)).status).toBe('succeeded');
    });

    it('a decision that does not fit the wait is refused and changes nothing', async () => {
      const job = await start({ steps: 2, approveAt: 1 });
      await settled(job.jobId);
      const before = await stack.counts();
      const r = await stack.call('respond_to_job', { jobId: job.jobId, decision: 'mark_done' });
      expect(sc(r)).toMatchObject({ category: 'invalid_input' });
      expect(await stack.counts()).toEqual(before);
      const notWaiting = await stack.call('respond_to_job', { jobId: (await start({ steps: 1 })).jobId, decision: 'approve' });
      expect(sc(notWaiting)).toMatchObject({ category: 'conflict', code: 'job_not_waiting' });
      await stack.call('cancel_job', { jobId: job.jobId });
    });

    it('survives server and worker restarts: no unapproved run before, no second prompt after', async () => {
      const job = await start({ steps: 2, approveAt: 2 });
      await settled(job.jobId);
      // Restart every worker while it waits: it must still wait, with step-002 never started.
      await Promise.all(stack.workers.splice(0).map((w) => w.stop()));
      await stack.startWorker();
      await sleep(1500);
      expect(await status(job.jobId)).toMatchObject({ status: 'waiting', waitingReason: 'needs_approval' });
      // Approve through a server process that is then killed, with no worker running; a new
      // server and a new worker finish it: the decision lives in Postgres, not in any process.
      await Promise.all(stack.workers.splice(0).map((w) => w.stop()));
      const first = spawnNode(SERVER_MAIN, ['--http'], { ...stack.env, STEPWISE_HTTP_PORT: '0' });
      const approver = await connectHttpClient(String((await first.waitFor((l) => l.msg === 'mcp server listening')).url));
      const approved = await approver.callTool({ name: 'respond_to_job', arguments: { jobId: job.jobId, decision: 'approve' } });
      expect(sc(approved as never)).toMatchObject({ decision: 'approve', resuming: true });
      await approver.close();
      first.child.kill('SIGKILL');
      await first.exited;
      const second = spawnNode(SERVER_MAIN, ['--http'], { ...stack.env, STEPWISE_HTTP_PORT: '0' });
      try {
        const reader = await connectHttpClient(String((await second.waitFor((l) => l.msg === 'mcp server listening')).url));
        await stack.startWorker();
        let s: Payload = {};
        for (let i = 0; i < 4 && s.status !== 'succeeded'; i++) {
          s = sc((await reader.callTool({ name: 'get_job_status', arguments: { jobId: job.jobId, waitSeconds: 20 } })) as never);
        }
        expect(s.status).toBe('succeeded');
        await reader.close();
      } finally {
        await second.stop();
      }
      const waits = (await transitions(job.jobId)).filter((e) => e.to_status === 'waiting' && e.kind === 'transition');
      expect(waits).toHaveLength(1); // asked once
    });

    it('with STEPWISE_APPROVAL_SEPARATION the requester cannot approve; someone else can', async () => {
      const server = spawnNode(SERVER_MAIN, ['--http'], { ...stack.env, STEPWISE_HTTP_PORT: '0', STEPWISE_APPROVAL_SEPARATION: 'true' });
      try {
        const ready = await server.waitFor((l) => l.msg === 'mcp server listening');
        const requester = await connectHttpClient(String(ready.url));
        const started = sc(
          (await requester.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1, approveAt: 1 }, idempotencyKey: `sep-${Math.random()}` } })) as never,
        );
        await settled(started.jobId);
        const refused = await requester.callTool({ name: 'respond_to_job', arguments: { jobId: started.jobId, decision: 'approve' } });
        expect(sc(refused as never)).toMatchObject({ category: 'forbidden', code: 'approver_is_requester' });
        await requester.close();
        // The stdio client acts as another principal (the configured local operator) and may approve.
        await stack.call('respond_to_job', { jobId: started.jobId, decision: 'approve' });
        expect((await settled(started.jobId)).status).toBe('succeeded');
      } finally {
        await server.stop();
      }
    });

    it('an approval nobody answers expires and ends the job with the reason recorded', async () => {
      await Promise.all(stack.workers.splice(0).map((w) => w.stop()));
      await stack.startWorker({ STEPWISE_APPROVAL_TTL_MS: '1000' });
      const job = await start({ steps: 2, approveAt: 1 });
      let s = await settled(job.jobId);
      for (let i = 0; i < 100 && s.status === 'waiting'; i++) {
        await sleep(100);
        s = await status(job.jobId);
      }
      expect(s).toMatchObject({ status: 'cancelled', error: { code: 'approval_expired' } });
      expect((await transitions(job.jobId)).at(-1)).toMatchObject({ to_status: 'cancelled', reason: 'wait_expired' });
      await Promise.all(stack.workers.splice(0).map((w) => w.stop()));
      await stack.startWorker();
    });
  });

  it('retry_job re-runs a failed job from the failed step with fresh keys, keeping earlier checkpoints', async () => {
    const job = await start({ steps: 3, failAt: 2, failWith: 'invalid_input', failInGroups: 1 });
    const failed = await settled(job.jobId);
    expect(failed).toMatchObject({ status: 'failed', currentStep: 'step-002' });
    const before = (failed.steps as Payload[]).find((s) => s.name === 'step-001');

    const r = sc(await stack.call('retry_job', { jobId: job.jobId, note: 'input fixed upstream' }));
    expect(r.status).toBe('pending');
    const done = await settled(job.jobId);
    expect(done.status).toBe('succeeded');
    const steps = done.steps as Payload[];
    expect(steps.find((s) => s.name === 'step-001')).toMatchObject({ idempotencyKey: before!.idempotencyKey, finishedAt: before!.finishedAt });
    expect(steps.find((s) => s.name === 'step-002')!.idempotencyKey).toBe(`${job.jobId}:step-002:2`);
    expect(steps.find((s) => s.name === 'step-003')!.idempotencyKey).toBe(`${job.jobId}:step-003:2`);

    const again = await stack.call('retry_job', { jobId: job.jobId });
    expect(sc(again)).toMatchObject({ category: 'conflict', code: 'job_not_failed' });
  });
});
