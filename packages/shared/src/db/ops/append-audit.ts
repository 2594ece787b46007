import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { jsonb } from '../sql-helpers.js';
import { storable } from '../../audit/redact.js';

export type AuditOutcome = 'success' | 'error' | 'denied';

export interface AuditRecord {
  tenantId: string;
  principalId: string;
  clientName?: string | undefined;
  clientVersion?: string | undefined;
  action: string;
  targetJobId?: string | undefined;
  argsDigest?: string | undefined;
  argsRedacted?: unknown;
  outcome: AuditOutcome;
  errorCode?: string | undefined;
  requestId?: string | undefined;
  traceId?: string | undefined;
}

/** Contract: appends one `audit_events` row. Pass the mutation's transaction so both commit together. */
export async function appendAudit(db: DbOrTx, a: AuditRecord): Promise<void> {
  await appendAuditBatch(db, [a]);
}

/**
 * Contract: appends `records` as ONE multi-row `insert into audit_events` (all or none).
 * Text fields lose NUL characters, which Postgres text cannot hold (callers' strings may carry them).
 */
export async function appendAuditBatch(db: DbOrTx, records: readonly AuditRecord[]): Promise<void> {
  if (records.length === 0) return;
  const rows = records.map(
    (a) => sql`(${txt(a.tenantId)}, ${txt(a.principalId)}, ${txt(a.clientName)}, ${txt(a.clientVersion)}, ${txt(a.action)},
            ${txt(a.targetJobId)}, ${txt(a.argsDigest)}, ${jsonb(storable(a.argsRedacted))}, ${a.outcome},
            ${txt(a.errorCode)}, ${txt(a.requestId)}, ${txt(a.traceId)})`,
  );
  await db.execute(sql`
    insert into audit_events (tenant_id, principal_id, client_name, client_version, action, target_job_id,
                              args_digest, args_redacted, outcome, error_code, request_id, trace_id)
    values ${sql.join(rows, sql`, `)}`);
}

function txt(s: string | undefined): string | null {
  return s === undefined ? null : s.replaceAll('\0', '');
}
