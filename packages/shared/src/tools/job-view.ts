import type { Job, StepRecord } from '../job/job.js';
import { isTerminal } from '../job/status.js';
import type { JobView, StepView } from './schemas.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** One line a person (or a text-only model) can act on. */
export function summarizeJob(job: Job): string {
  const total = job.plan.length;
  const where = job.currentStep ? `step ${Math.min(job.stepsDone + 1, total)}/${total} "${job.currentStep}"` : `${job.stepsDone}/${total} steps`;
  const words = job.progress?.message ? ` — ${job.progress.message}` : '';
  switch (job.status) {
    case 'pending':
      return `pending: queued, waiting for a worker (${total} steps).`;
    case 'running':
      return job.cancelRequestedAt ? `running: cancellation requested, stopping at ${where}.` : `running: ${where}${words}.`;
    case 'waiting':
      return job.resumeRequestedAt
        ? `waiting: decision recorded, resuming at ${where}.`
        : `waiting: ${job.waitingReason ?? 'needs a decision'} at ${where}. Use respond_to_job.`;
    case 'retrying':
      return `retrying: ${where} failed (${job.error?.category ?? 'error'}: ${job.error?.message ?? ''}); attempt ${job.attempt}/${job.maxAttempts} at ${iso(job.nextRunAt) ?? 'soon'}.`;
    case 'succeeded': {
      const ms = job.finishedAt && job.startedAt ? job.finishedAt.getTime() - job.startedAt.getTime() : null;
      return `succeeded: all ${total} steps done${ms === null ? '' : ` in ${(ms / 1000).toFixed(1)} s`}.`;
    }
    case 'failed':
      return `failed at ${where}: ${job.error?.message ?? 'unknown error'} (${job.error?.category ?? 'internal'}).`;
    case 'cancelled':
      return `cancelled${job.cancelReason ? `: ${job.cancelReason}` : ''} after ${job.stepsDone}/${total} steps.`;
  }
}

/** When a caller should ask again: soon while running, at the retry time while retrying. */
export function pollAfterMs(job: Job, now: number): number | null {
  if (isTerminal(job.status)) return null;
  if (job.status === 'retrying' && job.nextRunAt) return Math.max(1000, job.nextRunAt.getTime() - now);
  if (job.status === 'waiting') return job.resumeRequestedAt ? 2000 : 30_000;
  return 2000;
}

export function toJobView(job: Job, now = Date.now()): JobView {
  const p = job.progress;
  return {
    jobId: job.id,
    type: job.type,
    status: job.status,
    summary: summarizeJob(job),
    progress: p
      ? {
          done: p.done,
          total: p.total,
          percent: p.total && p.total > 0 ? Math.round((p.done / p.total) * 1000) / 10 : null,
          message: p.message,
          updatedAt: p.updatedAt.toISOString(),
        }
      : null,
    currentStep: job.currentStep,
    stepsDone: job.stepsDone,
    stepsTotal: job.plan.length,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    nextRetryAt: iso(job.nextRunAt),
    waitingReason: job.waitingReason,
    ...(job.status === 'waiting' && job.waitingDetails != null ? { waitingDetails: job.waitingDetails } : {}),
    resuming: job.status === 'waiting' && job.resumeRequestedAt !== null,
    cancelRequested: job.cancelRequestedAt !== null,
    ...(job.status === 'succeeded' ? { result: job.result } : {}),
    error: job.error,
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    finishedAt: iso(job.finishedAt),
    pollAfterMs: pollAfterMs(job, now),
  };
}

export function toStepView(s: StepRecord, includeOutput: boolean): StepView {
  return {
    name: s.name,
    status: s.status,
    effect: s.effect,
    attempt: s.attempt,
    idempotencyKey: s.idempotencyKey,
    startedAt: iso(s.startedAt),
    finishedAt: iso(s.finishedAt),
    ...(includeOutput && s.status === 'succeeded' ? { output: s.output } : {}),
    error: s.error,
  };
}
