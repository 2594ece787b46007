import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { TenantId } from '../../ids.js';
import type { Scope } from '../../auth/principal.js';
import type { ApiKeyRecord, PrincipalRecord } from '../../auth/principal-record.js';
import { generateApiKey } from '../../auth/api-key.js';
import { newApiKeyId, newPrincipalId } from '../../auth/auth-ids.js';
import { apiKeyFromRow, principalFromRow } from '../auth-rows.js';
import { rowsOf } from '../sql-helpers.js';
import { textArray } from '../text-array.js';

/**
 * Contract: one statement, for the quick start. Only when `api_keys` is empty, creates the
 * principal `(tenantId, principalName)` and one key for it, and returns both with the token;
 * otherwise (any key exists, even revoked, or that principal already exists) does nothing and
 * returns null. Servers starting at once race on the principals unique index: one inserts, the
 * others wait for it and then insert nothing, so exactly one key is minted.
 */
export async function createFirstApiKey(
  db: DbOrTx,
  args: { tenantId: TenantId; principalName: string; scopes: readonly Scope[]; keyName: string },
): Promise<{ principal: PrincipalRecord; key: ApiKeyRecord; token: string } | null> {
  const generated = generateApiKey();
  const row = rowsOf(
    await db.execute(sql`
      with p as (
        insert into principals (id, tenant_id, name, scopes)
        select ${newPrincipalId()}, ${args.tenantId}, ${args.principalName}, ${textArray(args.scopes)}
        where not exists (select 1 from api_keys)
        on conflict (tenant_id, name) do nothing
        returning *
      ), k as (
        insert into api_keys (id, principal_id, tenant_id, name, prefix, hash, scopes)
        select ${newApiKeyId()}, p.id, p.tenant_id, ${args.keyName}, ${generated.prefix}, ${generated.hash}, null
        from p
        returning *
      )
      select row_to_json(p.*) as principal, row_to_json(k.*) as key from p join k on k.principal_id = p.id`),
  )[0];
  if (!row) return null;
  return {
    principal: principalFromRow(row.principal as Record<string, unknown>),
    key: apiKeyFromRow(row.key as Record<string, unknown>),
    token: generated.token,
  };
}
