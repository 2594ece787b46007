import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { Job, StepApproval } from '../../job/job.js';
import type { JobId, PrincipalId, TenantId } from '../../ids.js';
import type { ErrorInfo } from '../../errors/stepwise-error.js';
import { jobFromRow } from '../rows.js';
import { jsonb, rowsOf } from '../sql-helpers.js';

/** What a person decided about a waiting job; persisted in job_events and audit. */
export type WaitDecision =
  | {
      kind: 'resume';
      stepReset?: { step: string; to: 'pending' } | undefined;
      stepDone?: { step: string; output: unknown; outputSha256: string } | undefined;
      stepApproval?: { step: string; approval: StepApproval } | undefined;
    }
  | { kind: 'cancel'; error: ErrorInfo; stepApproval?: { step: string; approval: StepApproval } | undefined }
  | { kind: 'fail'; error: ErrorInfo };

export interface RespondArgs {
  tenantId: TenantId;
  jobId: JobId;
  by: PrincipalId;
  /** The waiting reason the decision was made for; guards against deciding on a changed job. */
  expectedReason: string;
  decision: WaitDecision;
  note: string | null;
  /** What was decided, as recorded (e.g. `{ decision: 'mark_done' }`). */
  record: Record<string, unknown>;
}

/**
 * Contract: ONE guarded statement resolves a `waiting` job (for the expected reason):
 * - resume: sets `resume_requested_at` so a worker may claim it (waiting → running at claim), and
 *   optionally resets the interrupted step to `pending` (run it again) or checkpoints it as
 *   `succeeded` with the given output (mark done), or records an approval on the step;
 * - cancel / fail: moves `waiting → cancelled | failed` at once (a rejection is recorded on the step).
 * Records a `decision` event with who decided. Returns null when the job is not waiting for that
 * reason (unknown, other tenant, already decided).
 */
export async function respondToJob(db: DbOrTx, a: RespondArgs): Promise<Job | null> {
  const d = a.decision;
  const to = d.kind === 'cancel' ? 'cancelled' : d.kind === 'fail' ? 'failed' : null;
  const stepReset = d.kind === 'resume' && d.stepReset ? d.stepReset : null;
  const stepDone = d.kind === 'resume' && d.stepDone ? d.stepDone : null;
  const stepApproval = d.kind !== 'fail' && d.stepApproval ? d.stepApproval : null;
  const rows = rowsOf(
    await db.execute(sql`
      with j as (
        update jobs set
          ${to ? sql`status = ${to}, finished_at = now(), error = ${jsonb(d.kind === 'resume' ? null : d.error)},` : sql`resume_requested_at = now(),`}
          version = version + 1,
          updated_at = now()
        where id = ${a.jobId} and tenant_id = ${a.tenantId} and status = 'waiting'
          and waiting_reason = ${a.expectedReason} and resume_requested_at is null
        returning *
      ), ev as (
        insert into job_events (job_id, tenant_id, kind, from_status, to_status, reason, version, details)
        select id, tenant_id, 'decision', 'waiting', status, ${a.expectedReason}, version,
               ${jsonb({ ...a.record, by: a.by, note: a.note })}
        from j
      )
      ${stepReset ? sql`, s as (update job_steps set status = 'pending', updated_at = now() where job_id = (select id from j) and step_name = ${stepReset.step})` : sql``}
      ${
        stepDone
          ? sql`, s as (update job_steps set status = 'succeeded', output = ${jsonb(stepDone.output)}, output_sha256 = ${stepDone.outputSha256},
                 finished_at = now(), updated_at = now() where job_id = (select id from j) and step_name = ${stepDone.step})`
          : sql``
      }
      ${
        stepApproval
          ? sql`, a as (update job_steps set approval = ${jsonb(stepApproval.approval)}, updated_at = now()
                 where job_id = (select id from j) and step_name = ${stepApproval.step})`
          : sql``
      }
      select * from j`),
  );
  const row = rows[0];
  return row ? jobFromRow(row) : null;
}
