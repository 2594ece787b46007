import { sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import type { Job, PlannedStep } from '../../job/job.js';
import type { JobId, PrincipalId, TenantId } from '../../ids.js';
import { jobFromRow } from '../rows.js';
import { jsonb, rowsOf } from '../sql-helpers.js';
import { IdempotencyConflictError } from '../../errors/idempotency-conflict-error.js';
import { InternalError } from '../../errors/internal-error.js';
import type { AuditRecord } from './append-audit.js';
import { appendAudit } from './append-audit.js';

/** How long a job may take from creation to finish before the sweeper expires it. */
export const DEFAULT_JOB_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface NewJob {
  id: JobId;
  tenantId: TenantId;
  principalId: PrincipalId;
  type: string;
  input: unknown;
  idempotencyKey: string | undefined;
  idempotencyHash: string;
  requestHash: string;
  dedupWindowMs: number;
  plan: PlannedStep[];
  maxAttempts: number;
  traceId: string | undefined;
  /** A job not finished this long after creation is failed by the sweeper (`expired`). Default 7 days. */
  ttlMs?: number | undefined;
  /** The job's deadline from creation, and what happens when it passes. */
  deadlineMs?: number | undefined;
  deadlineAction?: 'fail' | 'cancel' | undefined;
}

export interface CreateJobResult {
  job: Job;
  /** false when an existing job inside the dedup window was returned instead. */
  created: boolean;
}

/**
 * Contract: creates a `pending` job with its `created` event and the caller's audit row in ONE
 * transaction, or returns the job that already holds `(tenant_id, idempotency_hash)`.
 *
 * - Concurrent identical calls: the unique index serializes them; losers see the winner's row.
 * - Same hash, window over: the old row gives up its hash (set NULL) and a new job is created.
 * - Same explicit key, different request: IdempotencyConflictError, nothing written.
 */
export async function createJob(db: Db, job: NewJob, audit: Omit<AuditRecord, 'targetJobId'>): Promise<CreateJobResult> {
  return db.transaction(async (tx) => {
    // After reclaiming an expired slot the old job may still have a queue entry under the bare
    // hash; the new job gets its own dispatch id so BullMQ does not ignore its enqueue.
    let dispatchId = job.idempotencyHash;
    for (let round = 0; round < 3; round++) {
      const inserted = rowsOf(
        await tx.execute(sql`
          with ins as (
            insert into jobs (id, tenant_id, principal_id, type, input, idempotency_key, idempotency_hash,
                              request_hash, dispatch_id, dedup_expires_at, plan, max_attempts, trace_id, current_step,
                              expires_at, deadline_at, deadline_action)
            values (${job.id}, ${job.tenantId}, ${job.principalId}, ${job.type}, ${jsonb(job.input)},
                    ${job.idempotencyKey ?? null}, ${job.idempotencyHash}, ${job.requestHash}, ${dispatchId},
                    now() + ${job.dedupWindowMs} * interval '1 millisecond', ${jsonb(job.plan)},
                    ${job.maxAttempts}, ${job.traceId ?? null}, ${job.plan[0]?.name ?? null},
                    now() + ${job.ttlMs ?? DEFAULT_JOB_TTL_MS} * interval '1 millisecond',
                    ${job.deadlineMs === undefined ? sql`null` : sql`now() + ${job.deadlineMs} * interval '1 millisecond'`},
                    ${job.deadlineMs === undefined ? null : (job.deadlineAction ?? 'fail')})
            on conflict (tenant_id, idempotency_hash) do nothing
            returning *
          ), ev as (
            insert into job_events (job_id, tenant_id, kind, to_status, version, reason)
            select id, tenant_id, 'created', 'pending', version, null from ins
          )
          select * from ins`),
      );
      const row = inserted[0];
      if (row) {
        const created = jobFromRow(row);
        await appendAudit(tx, { ...audit, targetJobId: created.id });
        return { job: created, created: true };
      }

      const existing = rowsOf(
        await tx.execute(sql`
          select *, dedup_expires_at < now() as dedup_expired from jobs
          where tenant_id = ${job.tenantId} and idempotency_hash = ${job.idempotencyHash}
          for update`),
      )[0];
      if (!existing) continue; // freed between our insert and select; try again
      if (existing.dedup_expired === true) {
        await tx.execute(sql`update jobs set idempotency_hash = null where id = ${String(existing.id)}`);
        dispatchId = `${job.idempotencyHash}-${job.id}`;
        continue;
      }
      const found = jobFromRow(existing);
      if (existing.request_hash !== job.requestHash) {
        throw new IdempotencyConflictError(job.idempotencyKey ?? '(derived from input)', found.id);
      }
      await appendAudit(tx, { ...audit, targetJobId: found.id });
      return { job: found, created: false };
    }
    throw new InternalError('createJob: idempotency slot kept changing under contention');
  });
}
