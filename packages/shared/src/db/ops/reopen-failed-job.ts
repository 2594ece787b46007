import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { Job } from '../../job/job.js';
import type { JobId, TenantId } from '../../ids.js';
import { REOPENABLE } from '../../job/transitions.js';
import { jobFromRow } from '../rows.js';
import { jsonb, rowsOf, statusIn } from '../sql-helpers.js';

/**
 * Contract: ONE guarded statement reopens a `failed` job as `pending` (retry_job). Succeeded
 * checkpoints stay and are skipped; the attempt group goes up by one, so every step that runs
 * again gets a fresh idempotency key (`jobId:step:group`). The failed step's row is reset to
 * `pending`. Records a `reopened` event. Returns null unless the job is failed and the tenant's.
 */
export async function reopenFailedJob(db: DbOrTx, args: { tenantId: TenantId; jobId: JobId; by: string; note: string | null }): Promise<Job | null> {
  const rows = rowsOf(
    await db.execute(sql`
      with j as (
        update jobs set status = 'pending', attempt_group = attempt_group + 1, attempt = 1, error = null,
          finished_at = null, next_run_at = null, cancel_requested_at = null, cancel_reason = null,
          waiting_reason = null, waiting_details = null, resume_requested_at = null,
          lease_owner = null, lease_expires_at = null,
          -- A fresh time-to-live from now: the old one may have been what failed it.
          expires_at = now() + (expires_at - created_at),
          version = version + 1, updated_at = now()
        where id = ${args.jobId} and tenant_id = ${args.tenantId} and status in ${statusIn(REOPENABLE)}
        returning *
      ), s as (
        update job_steps set status = 'pending', updated_at = now()
        where job_id = (select id from j) and status <> 'succeeded'
      ), ev as (
        insert into job_events (job_id, tenant_id, kind, from_status, to_status, reason, version, details)
        select id, tenant_id, 'reopened', 'failed', 'pending', 'retry_job', version,
               ${jsonb({ by: args.by, note: args.note })} || jsonb_build_object('attemptGroup', attempt_group)
        from j
      )
      select * from j`),
  );
  const row = rows[0];
  return row ? jobFromRow(row) : null;
}
