import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { JobId, TenantId } from '../../ids.js';
import { unsafeCast } from '../../ids.js';
import type { ErrorInfo } from '../../errors/stepwise-error.js';
import { jsonb, rowsOf } from '../sql-helpers.js';

// The sweeper's statements (DESIGN §1, §4): find jobs that should have a queue entry, expire
// jobs past their TTL, and apply retention. Each is one statement; callers hold the sweeper lock.

export interface DispatchCandidate {
  jobId: JobId;
  tenantId: TenantId;
  dispatchId: string;
  status: 'pending' | 'retrying' | 'running' | 'waiting';
  /** When the job is due (retrying), or null for now. */
  dueAt: Date | null;
}

/**
 * Contract: non-terminal jobs that a worker should be able to pick up from the queue — pending,
 * retrying, resumable waiting, and running with an expired lease — older than `minAgeMs` (so a
 * job whose enqueue is still in flight is left alone). Oldest first, at most `limit`.
 */
export async function findDispatchCandidates(db: DbOrTx, minAgeMs: number, limit: number): Promise<DispatchCandidate[]> {
  const rows = rowsOf(
    await db.execute(sql`
      select id, tenant_id, dispatch_id, status, next_run_at from jobs
      where updated_at < now() - ${minAgeMs} * interval '1 millisecond'
        and (status in ('pending', 'retrying')
             or (status = 'running' and lease_expires_at < now())
             or (status = 'waiting' and resume_requested_at is not null))
      order by updated_at
      limit ${limit}`),
  );
  return rows.map((r) => ({
    jobId: unsafeCast.jobId(String(r.id)),
    tenantId: unsafeCast.tenantId(String(r.tenant_id)),
    dispatchId: String(r.dispatch_id),
    status: r.status as DispatchCandidate['status'],
    dueAt: r.next_run_at instanceof Date ? r.next_run_at : r.next_run_at ? new Date(String(r.next_run_at)) : null,
  }));
}

/**
 * Contract: fails every non-terminal job whose `expires_at` passed (one guarded statement with
 * its events). A worker still holding one finds its lease gone on its next write and stops.
 */
export async function expireJobs(db: DbOrTx, error: ErrorInfo, limit: number): Promise<JobId[]> {
  const rows = rowsOf(
    await db.execute(sql`
      with prev as (
        select id, status from jobs
        where expires_at < now() and status in ('pending', 'running', 'waiting', 'retrying')
        order by expires_at limit ${limit}
        for update skip locked
      ), upd as (
        update jobs j set status = 'failed', error = ${jsonb(error)}, finished_at = now(), lease_owner = null,
          lease_expires_at = null, version = j.version + 1, updated_at = now()
        from prev where j.id = prev.id
        returning j.id, j.tenant_id, j.version, prev.status as prev_status
      ), ev as (
        insert into job_events (job_id, tenant_id, kind, from_status, to_status, reason, version)
        select id, tenant_id, 'transition', prev_status, 'failed', 'expired', version from upd
      )
      select id from upd`),
  );
  return rows.map((r) => unsafeCast.jobId(String(r.id)));
}

/** Contract: drops the checkpoints (job_steps) of jobs finished before the cutoff. Returns rows deleted. */
export async function purgeCheckpoints(db: DbOrTx, finishedBefore: Date, limit: number): Promise<number> {
  const rows = rowsOf(
    await db.execute(sql`
      with doomed as (
        select s.job_id, s.step_name from job_steps s join jobs j on j.id = s.job_id
        where j.finished_at < ${finishedBefore.toISOString()}::timestamptz
        limit ${limit}
      ), del as (
        delete from job_steps s using doomed d where s.job_id = d.job_id and s.step_name = d.step_name returning 1
      )
      select count(*)::int as n from del`),
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Contract: deletes jobs finished before the cutoff, leaving a tombstone (type, status, error code,
 * result digest and a short summary) in the same statement. Audit events and job events stay.
 */
export async function purgeJobs(db: DbOrTx, finishedBefore: Date, limit: number): Promise<number> {
  const rows = rowsOf(
    await db.execute(sql`
      with doomed as (
        select id from jobs where finished_at < ${finishedBefore.toISOString()}::timestamptz
        order by finished_at limit ${limit}
        for update skip locked
      ), del as (
        delete from jobs j using doomed d where j.id = d.id
        returning j.id, j.tenant_id, j.principal_id, j.type, j.status, j.result, j.error, j.created_at, j.finished_at
      ), tomb as (
        insert into job_tombstones (id, tenant_id, principal_id, type, status, result_sha256, result_summary,
                                    error_code, created_at, finished_at)
        select id, tenant_id, principal_id, type, status,
               case when result is null then null else encode(sha256(convert_to(result::text, 'UTF8')), 'hex') end,
               left(result::text, 500), error->>'code', created_at, finished_at
        from del
        on conflict (id) do nothing
      )
      select count(*)::int as n from del`),
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Contract: ends jobs whose wait or deadline passed while no worker holds them (one guarded
 * statement with its events): an unanswered wait (`waiting_expires_at`) ends as `waitExpiredTo`,
 * a passed deadline as its `deadline_action`. Running jobs are left to their worker's own timer.
 */
export async function endOverdueJobs(
  db: DbOrTx,
  args: { waitExpiredTo: 'cancelled' | 'failed'; waitError: ErrorInfo; deadlineError: ErrorInfo; limit: number },
): Promise<JobId[]> {
  const rows = rowsOf(
    await db.execute(sql`
      with prev as (
        select id, status,
          case when deadline_at < now() then 'deadline_exceeded' else 'wait_expired' end as why,
          case when deadline_at < now() then (case when deadline_action = 'cancel' then 'cancelled' else 'failed' end)
               else ${args.waitExpiredTo} end as target
        from jobs
        where status in ('pending', 'retrying', 'waiting')
          and (deadline_at < now() or (status = 'waiting' and resume_requested_at is null and waiting_expires_at < now()))
        order by updated_at limit ${args.limit}
        for update skip locked
      ), upd as (
        update jobs j set status = prev.target::job_status,
          error = case when prev.why = 'deadline_exceeded' then ${jsonb(args.deadlineError)} else ${jsonb(args.waitError)} end,
          finished_at = now(), next_run_at = null, version = j.version + 1, updated_at = now()
        from prev where j.id = prev.id
        returning j.id, j.tenant_id, j.version, j.status, prev.status as prev_status, prev.why
      ), ev as (
        insert into job_events (job_id, tenant_id, kind, from_status, to_status, reason, version)
        select id, tenant_id, 'transition', prev_status, status, why, version from upd
      )
      select id from upd`),
  );
  return rows.map((r) => unsafeCast.jobId(String(r.id)));
}
