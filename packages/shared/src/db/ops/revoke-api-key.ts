import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { TenantId } from '../../ids.js';
import type { ApiKeyRecord } from '../../auth/principal-record.js';
import { apiKeyFromRow } from '../auth-rows.js';
import { rowsOf } from '../sql-helpers.js';

/**
 * Contract: one guarded update. Revokes the key whose id (`key_…`) or prefix is `idOrPrefix`
 * (restricted to `tenantId` when given). The first revocation wins; revoking again changes
 * nothing and reports `changed: false` with the original `revokedAt`. Null for an unknown key.
 * A revoked key fails authentication from the next request on (HTTP checks every request).
 */
export async function revokeApiKey(
  db: DbOrTx,
  args: { idOrPrefix: string; tenantId?: TenantId | undefined },
): Promise<{ key: ApiKeyRecord; changed: boolean } | null> {
  const match = sql`(id = ${args.idOrPrefix} or prefix = ${args.idOrPrefix}) ${args.tenantId ? sql`and tenant_id = ${args.tenantId}` : sql``}`;
  const row = rowsOf(
    await db.execute(sql`
      with upd as (
        update api_keys set revoked_at = now()
        where ${match} and revoked_at is null
        returning *, true as changed
      )
      select * from upd
      union all
      select *, false as changed from api_keys where ${match} and not exists (select 1 from upd)`),
  )[0];
  return row ? { key: apiKeyFromRow(row), changed: row.changed === true } : null;
}
