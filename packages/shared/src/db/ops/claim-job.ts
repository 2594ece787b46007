import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { Job, StepRecord } from '../../job/job.js';
import type { JobId, WorkerId } from '../../ids.js';
import { jobFromRow, stepFromRow } from '../rows.js';
import { rowsOf, statusIn } from '../sql-helpers.js';
import type { PrincipalGrant } from './principal-grant.js';

export interface ClaimedJob {
  job: Job;
  /** Checkpoints written so far, in plan order; what a resume starts from. */
  steps: StepRecord[];
  /** Status before the claim (`running` means an expired lease was taken over). */
  previousStatus: Job['status'];
  /** The stored principal that started the job, for recovery re-validation; null when it has no row. */
  principalGrant: PrincipalGrant | null;
}

/**
 * Contract: one guarded statement that moves `pending | retrying → running`, or `waiting → running`
 * once respond_to_job allowed it, or takes over a `running` job whose lease has expired, and bumps
 * `lease_fence`. The new fence is the worker's
 * token: every later write it makes is `WHERE lease_fence = fence`, so a worker that lost the
 * lease cannot write. Records a `job_events` row in the same statement.
 *
 * Returns null when the job is not claimable (unknown, terminal, waiting, leased by a live worker,
 * or its tenant is at `tenantMaxRunning`).
 */
export async function claimJob(
  db: DbOrTx,
  args: {
    jobId: JobId;
    workerId: WorkerId;
    leaseMs: number;
    /**
     * Fairness: refuse the claim while the job's tenant already has this many jobs running with a
     * live lease (0 = no cap), so one tenant's flood cannot take every worker slot.
     */
    tenantMaxRunning?: number;
  },
): Promise<ClaimedJob | null> {
  const cap = args.tenantMaxRunning ?? 0;
  if (cap > 0) {
    // Concurrent claims would each count the others' claims as not yet running and overshoot
    // the cap; a per-tenant transaction lock makes count-then-claim atomic. Still one commit.
    return db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended('stepwise-tenant:' || tenant_id, 0)) from jobs where id = ${args.jobId}`);
      return claim(tx, args, cap);
    });
  }
  return claim(db, args, 0);
}

async function claim(db: DbOrTx, args: { jobId: JobId; workerId: WorkerId; leaseMs: number }, cap: number): Promise<ClaimedJob | null> {
  const rows = rowsOf(
    await db.execute(sql`
      with prev as (
        select id, status from jobs
        where id = ${args.jobId}
          and (status in ${statusIn(['pending', 'retrying'])}
               or (status = 'running' and lease_expires_at < now())
               or (status = 'waiting' and resume_requested_at is not null))
          and (${cap} <= 0 or (
            select count(*) from jobs r
            where r.tenant_id = jobs.tenant_id and r.status = 'running' and r.lease_expires_at > now() and r.id <> jobs.id
          ) < ${cap})
        for update
      ), upd as (
        update jobs j set
          status = 'running',
          lease_owner = ${args.workerId},
          lease_fence = j.lease_fence + 1,
          lease_expires_at = now() + ${args.leaseMs} * interval '1 millisecond',
          started_at = coalesce(j.started_at, now()),
          next_run_at = null,
          waiting_reason = null,
          waiting_details = null,
          resume_requested_at = null,
          version = j.version + 1,
          updated_at = now()
        from prev where j.id = prev.id
        returning j.*, prev.status as prev_status
      ), ev as (
        insert into job_events (job_id, tenant_id, kind, from_status, to_status, worker_id, version, details)
        select id, tenant_id, case when prev_status = 'running' then 'lease_taken_over' else 'transition' end,
               prev_status, 'running', ${args.workerId}, version, jsonb_build_object('fence', lease_fence)
        from upd
      )
      select upd.*,
        (select coalesce(json_agg(s order by s.position), '[]'::json) from job_steps s where s.job_id = upd.id) as steps,
        -- Read in the same statement so recovery re-validation costs no extra round trip.
        (select json_build_object('disabled', p.disabled_at is not null, 'scopes', p.scopes)
           from principals p where p.id = upd.principal_id and p.tenant_id = upd.tenant_id) as principal_grant
      from upd`),
  );
  const row = rows[0];
  if (!row) return null;
  return {
    job: jobFromRow(row),
    steps: (row.steps as Record<string, unknown>[]).map(stepFromRow),
    previousStatus: row.prev_status as Job['status'],
    principalGrant: (row.principal_grant ?? null) as PrincipalGrant | null,
  };
}
