import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { rowsOf, statusIn } from '../sql-helpers.js';
import type { PrincipalId, TenantId } from '../../ids.js';

/** Statuses that count against a principal's active-jobs quota. */
const ACTIVE = ['pending', 'running', 'waiting', 'retrying'] as const;

export interface StartQuotaUsage {
  /** A live job already holds this idempotency hash: the start is a dedup hit, never refused. */
  duplicate: boolean;
  active: number;
  /** Jobs this principal created in the last 60 s. */
  startedLastMinute: number;
  /** Milliseconds until the oldest of those leaves the 60 s window (0 when none). */
  windowFreesInMs: number;
}

/**
 * Contract: reads (never writes) what start_job's quotas need, in one statement: whether
 * `(tenantId, idempotencyHash)` is a live dedup hit, and the principal's active jobs and starts in
 * the last minute (a sliding window over `jobs.created_at`). Not locked: concurrent starts by one
 * principal may overshoot a limit by at most their number.
 */
export async function checkStartQuota(
  db: DbOrTx,
  a: { tenantId: TenantId; principalId: PrincipalId; idempotencyHash: string },
): Promise<StartQuotaUsage> {
  const row = rowsOf(
    await db.execute(sql`
      select exists(select 1 from jobs where tenant_id = ${a.tenantId} and idempotency_hash = ${a.idempotencyHash}
                                         and dedup_expires_at >= now()) as duplicate,
             (select count(*) from jobs where tenant_id = ${a.tenantId} and principal_id = ${a.principalId}
                                         and status in ${statusIn([...ACTIVE])})::int as active,
             w.n::int as started, coalesce(ceil(extract(epoch from (w.oldest + interval '1 minute' - now())) * 1000), 0)::int as frees_in
        from (select count(*) as n, min(created_at) as oldest from jobs
               where tenant_id = ${a.tenantId} and principal_id = ${a.principalId}
                 and created_at > now() - interval '1 minute') w`),
  )[0];
  return {
    duplicate: row?.duplicate === true,
    active: Number(row?.active ?? 0),
    startedLastMinute: Number(row?.started ?? 0),
    windowFreesInMs: Math.max(0, Number(row?.frees_in ?? 0)),
  };
}
