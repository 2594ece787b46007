import { describe, it, expect } from 'vitest';
import { pollAfterMs, summarizeJob, toJobView, toStepView } from './job-view.js';
import { JobViewSchema, StepViewSchema } from './schemas.js';
import type { Job, StepRecord } from '../job/job.js';
import { JOB_STATUSES, isTerminal } from '../job/status.js';
import type { JobStatus } from '../job/status.js';
import type { JobId, PrincipalId, TenantId } from '../ids.js';

const NOW = Date.UTC(2025, 0, 1, 12, 0, 0);
const at = (offsetMs: number) => new Date(NOW + offsetMs);

function makeJob(over: Partial<Job> = {}): Job {
  return {
    id: 'job_01jh0000000000000000000000' as JobId,
    tenantId: 'acme' as TenantId,
    principalId: 'alice' as PrincipalId,
    type: 'demo.steps',
    input: { steps: 3 },
    idempotencyKey: null,
    dispatchId: 'a'.repeat(64),
    status: 'pending',
    version: 0,
    plan: [
      { name: 'fetch', effect: 'none' },
      { name: 'transform', effect: 'idempotent' },
      { name: 'store', effect: 'unsafe' },
    ],
    currentStep: 'fetch',
    stepsDone: 0,
    progress: null,
    result: null,
    error: null,
    attempt: 1,
    maxAttempts: 3,
    attemptGroup: 1,
    nextRunAt: null,
    cancelRequestedAt: null,
    cancelReason: null,
    waitingReason: null,
    waitingDetails: null,
    resumeRequestedAt: null,
    deadlineAt: null,
    deadlineAction: null,
    leaseOwner: null,
    leaseFence: 0,
    leaseExpiresAt: null,
    traceId: null,
    createdAt: at(-60_000),
    updatedAt: at(-1_000),
    startedAt: null,
    finishedAt: null,
    ...over,
  };
}

const transientError = { code: 'transient', category: 'transient' as const, retryable: true, message: 'upstream reset' };

describe('summarizeJob', () => {
  it('pending', () => {
    expect(summarizeJob(makeJob())).toBe('pending: queued, waiting for a worker (3 steps).');
  });

  it('running: names the step and the progress message', () => {
    const j = makeJob({
      status: 'running',
      currentStep: 'transform',
      stepsDone: 1,
      progress: { done: 4392, total: 10000, message: 'indexed 4,392/10,000: reports_2024.pdf', updatedAt: at(0) },
    });
    expect(summarizeJob(j)).toBe('running: step 2/3 "transform" — indexed 4,392/10,000: reports_2024.pdf.');
  });

  it('running without a current step counts steps', () => {
    expect(summarizeJob(makeJob({ status: 'running', currentStep: null, stepsDone: 1 }))).toBe('running: 1/3 steps.');
  });

  it('running with a cancel request says it is stopping', () => {
    const j = makeJob({ status: 'running', currentStep: 'store', stepsDone: 2, cancelRequestedAt: at(0) });
    expect(summarizeJob(j)).toBe('running: cancellation requested, stopping at step 3/3 "store".');
  });

  it('waiting: gives the reason and what to do', () => {
    const j = makeJob({ status: 'waiting', currentStep: 'store', stepsDone: 2, waitingReason: 'needs_confirmation' });
    expect(summarizeJob(j)).toBe('waiting: needs_confirmation at step 3/3 "store". Use respond_to_job.');
    expect(summarizeJob(makeJob({ status: 'waiting', waitingReason: null }))).toContain('needs a decision');
  });

  it('retrying: gives the error, the attempt and when', () => {
    const j = makeJob({ status: 'retrying', currentStep: 'transform', stepsDone: 1, attempt: 2, error: transientError, nextRunAt: at(5_000) });
    expect(summarizeJob(j)).toBe(
      `retrying: step 2/3 "transform" failed (transient: upstream reset); attempt 2/3 at ${at(5_000).toISOString()}.`,
    );
  });

  it('succeeded: gives the duration', () => {
    const j = makeJob({ status: 'succeeded', currentStep: null, stepsDone: 3, startedAt: at(-1_500), finishedAt: at(0) });
    expect(summarizeJob(j)).toBe('succeeded: all 3 steps done in 1.5 s.');
    expect(summarizeJob({ ...j, startedAt: null })).toBe('succeeded: all 3 steps done.');
  });

  it('failed: gives the error', () => {
    const j = makeJob({
      status: 'failed',
      currentStep: 'transform',
      stepsDone: 1,
      error: { code: 'http_forbidden', category: 'forbidden', retryable: false, message: 'access is denied' },
    });
    expect(summarizeJob(j)).toBe('failed at step 2/3 "transform": access is denied (forbidden).');
  });

  it('cancelled: gives the reason when there is one', () => {
    expect(summarizeJob(makeJob({ status: 'cancelled', stepsDone: 1, cancelReason: 'user changed their mind' }))).toBe(
      'cancelled: user changed their mind after 1/3 steps.',
    );
    expect(summarizeJob(makeJob({ status: 'cancelled', stepsDone: 0 }))).toBe('cancelled after 0/3 steps.');
  });

  it.each(JOB_STATUSES)('%s summary starts with the status', (status) => {
    expect(summarizeJob(makeJob({ status })).startsWith(status)).toBe(true);
  });
});

describe('pollAfterMs', () => {
  it.each(JOB_STATUSES.filter((s) => isTerminal(s)))('%s → null', (status) => {
    expect(pollAfterMs(makeJob({ status }), NOW)).toBeNull();
  });

  it('pending and running → 2 s', () => {
    expect(pollAfterMs(makeJob({ status: 'pending' }), NOW)).toBe(2000);
    expect(pollAfterMs(makeJob({ status: 'running' }), NOW)).toBe(2000);
  });

  it('waiting → 30 s (a person has to act)', () => {
    expect(pollAfterMs(makeJob({ status: 'waiting' }), NOW)).toBe(30_000);
  });

  it('retrying → until the next run, at least 1 s', () => {
    expect(pollAfterMs(makeJob({ status: 'retrying', nextRunAt: at(7_000) }), NOW)).toBe(7_000);
    expect(pollAfterMs(makeJob({ status: 'retrying', nextRunAt: at(200) }), NOW)).toBe(1_000);
    expect(pollAfterMs(makeJob({ status: 'retrying', nextRunAt: at(-5_000) }), NOW)).toBe(1_000);
    expect(pollAfterMs(makeJob({ status: 'retrying', nextRunAt: null }), NOW)).toBe(2000);
  });
});

describe('toJobView', () => {
  it.each(JOB_STATUSES)('a %s job gives a view that matches JobViewSchema', (status: JobStatus) => {
    const v = toJobView(makeJob({ status, result: { answer: 42 } }), NOW);
    expect(JobViewSchema.safeParse(v).success).toBe(true);
    expect(v.status).toBe(status);
    expect(v.summary).toBe(summarizeJob(makeJob({ status, result: { answer: 42 } })));
    expect(v.pollAfterMs === null).toBe(isTerminal(status));
  });

  it('includes result only when succeeded', () => {
    for (const status of JOB_STATUSES) {
      const v = toJobView(makeJob({ status, result: { answer: 42 } }), NOW);
      if (status === 'succeeded') expect(v.result).toEqual({ answer: 42 });
      else expect('result' in v).toBe(false);
    }
  });

  it('computes percent to one decimal place', () => {
    const view = (done: number, total: number | null) =>
      toJobView(makeJob({ status: 'running', progress: { done, total, message: null, updatedAt: at(0) } }), NOW).progress;
    expect(view(1, 3)?.percent).toBe(33.3);
    expect(view(2, 3)?.percent).toBe(66.7);
    expect(view(4392, 10_000)?.percent).toBe(43.9);
    expect(view(10, 10)?.percent).toBe(100);
    expect(view(0, 10)?.percent).toBe(0);
    expect(view(5, null)?.percent).toBeNull();
    expect(view(5, 0)?.percent).toBeNull();
  });

  it('maps progress, dates, counts and flags', () => {
    const j = makeJob({
      status: 'retrying',
      currentStep: 'transform',
      stepsDone: 1,
      attempt: 2,
      nextRunAt: at(3_000),
      error: transientError,
      progress: { done: 1, total: 4, message: 'one of four', updatedAt: at(-500) },
      cancelRequestedAt: null,
    });
    const v = toJobView(j, NOW);
    expect(v).toMatchObject({
      jobId: j.id,
      type: 'demo.steps',
      currentStep: 'transform',
      stepsDone: 1,
      stepsTotal: 3,
      attempt: 2,
      maxAttempts: 3,
      nextRetryAt: at(3_000).toISOString(),
      cancelRequested: false,
      error: transientError,
      createdAt: at(-60_000).toISOString(),
      updatedAt: at(-1_000).toISOString(),
      finishedAt: null,
      pollAfterMs: 3_000,
      progress: { done: 1, total: 4, percent: 25, message: 'one of four', updatedAt: at(-500).toISOString() },
    });
    expect(toJobView(makeJob({ status: 'running', cancelRequestedAt: at(0) }), NOW).cancelRequested).toBe(true);
    expect(toJobView(makeJob(), NOW).progress).toBeNull();
  });
});

describe('toStepView', () => {
  const rec: StepRecord = {
    name: 'fetch',
    position: 0,
    status: 'succeeded',
    effect: 'none',
    attempt: 1,
    attemptGroup: 1,
    idempotencyKey: 'job_x:fetch:1',
    output: { rows: 3 },
    outputSha256: 'f'.repeat(64),
    cursor: null,
    error: null,
    approval: null,
    startedAt: at(-2_000),
    finishedAt: at(-1_000),
  };

  it('includes the output only when asked and the step succeeded', () => {
    expect(toStepView(rec, true).output).toEqual({ rows: 3 });
    expect('output' in toStepView(rec, false)).toBe(false);
    expect('output' in toStepView({ ...rec, status: 'started' }, true)).toBe(false);
  });

  it('matches StepViewSchema', () => {
    const v = toStepView({ ...rec, finishedAt: null }, true);
    expect(StepViewSchema.safeParse(v).success).toBe(true);
    expect(v).toMatchObject({ name: 'fetch', startedAt: at(-2_000).toISOString(), finishedAt: null, idempotencyKey: 'job_x:fetch:1' });
  });
});
