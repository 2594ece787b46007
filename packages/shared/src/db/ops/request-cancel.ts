import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { Job } from '../../job/job.js';
import type { JobId, TenantId } from '../../ids.js';
import type { ErrorInfo } from '../../errors/stepwise-error.js';
import { jobFromRow } from '../rows.js';
import { jsonb, rowsOf, statusIn } from '../sql-helpers.js';
import { sourcesOf } from '../../job/transitions.js';

export interface CancelOutcome {
  job: Job;
  /** `cancelled` when the job ended here; `requested` when a worker holds it and must stop it. */
  effect: 'cancelled' | 'requested';
  previousStatus: Job['status'];
}

/**
 * Contract: one guarded statement. A job that no worker holds (`pending | retrying | waiting`)
 * becomes `cancelled` at once; a `running` job gets `cancel_requested_at` set (first request
 * wins, repeats change nothing) for its worker to act on. Records a `job_events` row.
 * Returns null when nothing changed: unknown id, other tenant, terminal, or already requested.
 */
export async function requestCancel(
  db: DbOrTx,
  args: { tenantId: TenantId; jobId: JobId; reason: string | null; error: ErrorInfo },
): Promise<CancelOutcome | null> {
  const direct = sourcesOf('cancelled').filter((s) => s !== 'running');
  const rows = rowsOf(
    await db.execute(sql`
      with prev as (
        select id, status from jobs
        where id = ${args.jobId} and tenant_id = ${args.tenantId}
          and (status in ${statusIn(direct)} or (status = 'running' and cancel_requested_at is null))
        for update
      ), upd as (
        update jobs j set
          cancel_requested_at = now(),
          cancel_reason = ${args.reason},
          status = case when prev.status in ${statusIn(direct)} then 'cancelled'::job_status else j.status end,
          finished_at = case when prev.status in ${statusIn(direct)} then now() else j.finished_at end,
          error = case when prev.status in ${statusIn(direct)} then ${jsonb(args.error)} else j.error end,
          next_run_at = null,
          version = j.version + 1,
          updated_at = now()
        from prev where j.id = prev.id
        returning j.*, prev.status as prev_status
      ), ev as (
        insert into job_events (job_id, tenant_id, kind, from_status, to_status, reason, version)
        select id, tenant_id, case when status = 'cancelled' then 'transition' else 'cancel_requested' end,
               prev_status, status, ${args.reason}, version
        from upd
      )
      select * from upd`),
  );
  const row = rows[0];
  if (!row) return null;
  const job = jobFromRow(row);
  return { job, effect: job.status === 'cancelled' ? 'cancelled' : 'requested', previousStatus: row.prev_status as Job['status'] };
}
