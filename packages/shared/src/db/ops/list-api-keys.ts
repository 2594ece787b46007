import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { TenantId } from '../../ids.js';
import type { ApiKeyRecord } from '../../auth/principal-record.js';
import { apiKeyFromRow } from '../auth-rows.js';
import { rowsOf } from '../sql-helpers.js';

export interface ApiKeyListing extends ApiKeyRecord {
  principalName: string;
  principalDisabledAt: Date | null;
}

/** Contract: every key (of `tenantId` when given) with its principal's name, by tenant then age. Never the hash. */
export async function listApiKeys(db: DbOrTx, args: { tenantId?: TenantId | undefined } = {}): Promise<ApiKeyListing[]> {
  const rows = rowsOf(
    await db.execute(sql`
      select k.id, k.principal_id, k.tenant_id, k.name, k.prefix, k.scopes, k.created_at, k.expires_at, k.revoked_at,
             k.last_used_at, p.name as principal_name, p.disabled_at as principal_disabled_at
      from api_keys k join principals p on p.id = k.principal_id
      ${args.tenantId ? sql`where k.tenant_id = ${args.tenantId}` : sql``}
      order by k.tenant_id, k.id`),
  );
  return rows.map((r) => ({
    ...apiKeyFromRow(r),
    principalName: String(r.principal_name),
    principalDisabledAt: r.principal_disabled_at == null ? null : new Date(r.principal_disabled_at as Date | string),
  }));
}
