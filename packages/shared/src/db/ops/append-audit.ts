import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { jsonb } from '../sql-helpers.js';

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
  await db.execute(sql`
    insert into audit_events (tenant_id, principal_id, client_name, client_version, action, target_job_id,
                              args_digest, args_redacted, outcome, error_code, request_id, trace_id)
    values (${a.tenantId}, ${a.principalId}, ${a.clientName ?? null}, ${a.clientVersion ?? null}, ${a.action},
            ${a.targetJobId ?? null}, ${a.argsDigest ?? null}, ${jsonb(a.argsRedacted)}, ${a.outcome},
            ${a.errorCode ?? null}, ${a.requestId ?? null}, ${a.traceId ?? null})`);
}
