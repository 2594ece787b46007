import type { Job, PlannedStep, StepApproval, StepRecord } from '../job/job.js';
import type { JobStatus, StepEffect, StepStatus } from '../job/status.js';
import type { ErrorInfo } from '../errors/stepwise-error.js';
import { unsafeCast } from '../ids.js';

// Raw rows from `db.execute(sql...)` are snake_case with postgres.js's own parsing (jsonb → value,
// timestamptz → Date). These mappers are the only code that knows column names outside schema.ts.

type Row = Record<string, unknown>;

const date = (v: unknown): Date | null => (v == null ? null : v instanceof Date ? v : new Date(String(v)));
const num = (v: unknown): number => Number(v);
const str = (v: unknown): string | null => (v == null ? null : String(v));

export function jobFromRow(r: Row): Job {
  const progressUpdatedAt = date(r.progress_updated_at);
  return {
    id: unsafeCast.jobId(String(r.id)),
    tenantId: unsafeCast.tenantId(String(r.tenant_id)),
    principalId: unsafeCast.principalId(String(r.principal_id)),
    type: String(r.type),
    input: r.input,
    idempotencyKey: str(r.idempotency_key),
    dispatchId: String(r.dispatch_id),
    status: r.status as JobStatus,
    version: num(r.version),
    plan: r.plan as PlannedStep[],
    currentStep: str(r.current_step),
    stepsDone: num(r.steps_done),
    progress:
      progressUpdatedAt && r.progress_done != null
        ? {
            done: num(r.progress_done),
            total: r.progress_total == null ? null : num(r.progress_total),
            message: str(r.progress_message),
            updatedAt: progressUpdatedAt,
          }
        : null,
    result: r.result ?? null,
    error: (r.error ?? null) as ErrorInfo | null,
    attempt: num(r.attempt),
    maxAttempts: num(r.max_attempts),
    attemptGroup: num(r.attempt_group),
    nextRunAt: date(r.next_run_at),
    cancelRequestedAt: date(r.cancel_requested_at),
    cancelReason: str(r.cancel_reason),
    waitingReason: str(r.waiting_reason),
    waitingDetails: r.waiting_details ?? null,
    resumeRequestedAt: date(r.resume_requested_at),
    deadlineAt: date(r.deadline_at),
    deadlineAction: r.deadline_action === 'cancel' ? 'cancel' : r.deadline_action === 'fail' ? 'fail' : null,
    leaseOwner: r.lease_owner == null ? null : unsafeCast.workerId(String(r.lease_owner)),
    leaseFence: num(r.lease_fence),
    leaseExpiresAt: date(r.lease_expires_at),
    traceId: str(r.trace_id),
    createdAt: date(r.created_at) ?? new Date(0),
    updatedAt: date(r.updated_at) ?? new Date(0),
    startedAt: date(r.started_at),
    finishedAt: date(r.finished_at),
  };
}

export function stepFromRow(r: Row): StepRecord {
  return {
    name: String(r.step_name),
    position: num(r.position),
    status: r.status as StepStatus,
    effect: r.effect as StepEffect,
    attempt: num(r.attempt),
    attemptGroup: num(r.attempt_group),
    idempotencyKey: String(r.idempotency_key),
    output: r.output ?? null,
    outputSha256: str(r.output_sha256),
    cursor: r.cursor ?? null,
    error: (r.error ?? null) as ErrorInfo | null,
    approval: (r.approval ?? null) as StepApproval | null,
    startedAt: date(r.started_at),
    finishedAt: date(r.finished_at),
  };
}
