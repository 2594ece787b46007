import { sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import { rowsOf } from '../sql-helpers.js';

export interface AuditQuery {
  tenantId?: string | undefined;
  principalId?: string | undefined;
  targetJobId?: string | undefined;
  action?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** At most 10,000. */
  limit: number;
}

export interface AuditEntry {
  id: number;
  at: Date;
  tenantId: string;
  principalId: string;
  clientName: string | null;
  clientVersion: string | null;
  action: string;
  targetJobId: string | null;
  argsDigest: string | null;
  argsRedacted: unknown;
  outcome: string;
  errorCode: string | null;
  requestId: string | null;
  traceId: string | null;
}

/** Contract: reads `audit_events` matching every given filter (operators: across tenants unless `tenantId`), newest first. */
export async function queryAudit(db: DbOrTx, q: AuditQuery): Promise<AuditEntry[]> {
  const conds: SQL[] = [sql`true`];
  if (q.tenantId !== undefined) conds.push(sql`tenant_id = ${q.tenantId}`);
  if (q.principalId !== undefined) conds.push(sql`principal_id = ${q.principalId}`);
  if (q.targetJobId !== undefined) conds.push(sql`target_job_id = ${q.targetJobId}`);
  if (q.action !== undefined) conds.push(sql`action = ${q.action}`);
  if (q.since !== undefined) conds.push(sql`at >= ${q.since.toISOString()}::timestamptz`);
  if (q.until !== undefined) conds.push(sql`at < ${q.until.toISOString()}::timestamptz`);
  const rows = rowsOf(
    await db.execute(sql`select * from audit_events where ${sql.join(conds, sql` and `)} order by at desc, id desc limit ${Math.min(q.limit, 10_000)}`),
  );
  return rows.map((r) => ({
    id: Number(r.id),
    at: new Date(r.at as string | Date),
    tenantId: r.tenant_id as string,
    principalId: r.principal_id as string,
    clientName: (r.client_name as string | null) ?? null,
    clientVersion: (r.client_version as string | null) ?? null,
    action: r.action as string,
    targetJobId: (r.target_job_id as string | null) ?? null,
    argsDigest: (r.args_digest as string | null) ?? null,
    argsRedacted: r.args_redacted ?? null,
    outcome: r.outcome as string,
    errorCode: (r.error_code as string | null) ?? null,
    requestId: (r.request_id as string | null) ?? null,
    traceId: (r.trace_id as string | null) ?? null,
  }));
}
