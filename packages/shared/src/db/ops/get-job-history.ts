import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { rowsOf } from '../sql-helpers.js';
import type { JobId, TenantId } from '../../ids.js';
import type { JobHistoryEntry } from '../../tools/schemas.js';

/** Where a page ended: (at as Postgres text, source, id), encoded for the wire. */
interface HistoryCursor {
  at: string;
  source: 'event' | 'audit';
  id: number;
}

/** `at::text` as Postgres prints a timestamptz (DateStyle ISO). */
const PG_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;

export function encodeHistoryCursor(c: HistoryCursor): string {
  return Buffer.from(JSON.stringify([c.at, c.source, c.id])).toString('base64url');
}

/** Undefined when the cursor was not made by encodeHistoryCursor (the caller answers invalid_input). */
export function decodeHistoryCursor(s: string): HistoryCursor | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (!Array.isArray(v) || v.length !== 3) return undefined;
    const [at, source, id] = v as unknown[];
    if (typeof at !== 'string' || !PG_TIMESTAMP.test(at) || (source !== 'event' && source !== 'audit')) return undefined;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) return undefined;
    return { at, source, id };
  } catch {
    return undefined;
  }
}

/**
 * Contract: one page of a job's history, oldest first: its `job_events` (transitions, decisions,
 * retries, cancel requests) merged with the `audit_events` rows that target it, both filtered by
 * `tenantId` (another tenant's job yields nothing). Ordered by (at, source, id); `after` is the
 * last entry of the previous page. Returns up to `limit` entries and whether more follow.
 */
export async function getJobHistory(
  db: DbOrTx,
  a: { tenantId: TenantId; jobId: JobId; limit: number; after?: HistoryCursor | undefined },
): Promise<{ entries: JobHistoryEntry[]; next: string | null }> {
  const after = a.after ? sql`where (h.at, h.source, h.id) > (${a.after.at}::timestamptz, ${a.after.source}, ${a.after.id})` : sql``;
  const rows = rowsOf(
    await db.execute(sql`
      select h.*, h.at::text as at_text,
             to_char(h.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at_iso from (
        select 'event' as source, e.id, e.at, e.kind, e.from_status::text as from_status, e.to_status::text as to_status,
               e.worker_id as actor, null::text as outcome, null::text as error_code, e.reason, e.details
          from job_events e where e.tenant_id = ${a.tenantId} and e.job_id = ${a.jobId}
        union all
        select 'audit', x.id, x.at, x.action, null, null, x.principal_id, x.outcome, x.error_code, null, x.args_redacted
          from audit_events x where x.tenant_id = ${a.tenantId} and x.target_job_id = ${a.jobId}
      ) h ${after}
      order by h.at, h.source, h.id
      limit ${a.limit + 1}`),
  );
  const page = rows.slice(0, a.limit);
  const last = page[page.length - 1];
  const entries = page.map((r) => ({
    source: r.source as 'event' | 'audit',
    at: r.at_iso as string,
    kind: r.kind as string,
    fromStatus: (r.from_status as string | null) ?? null,
    toStatus: (r.to_status as string | null) ?? null,
    actor: (r.actor as string | null) ?? null,
    outcome: (r.outcome as string | null) ?? null,
    errorCode: (r.error_code as string | null) ?? null,
    reason: (r.reason as string | null) ?? null,
    details: r.details ?? null,
  }));
  const next = rows.length > a.limit && last ? encodeHistoryCursor({ at: last.at_text as string, source: last.source as 'event' | 'audit', id: Number(last.id) }) : null;
  return { entries, next };
}
