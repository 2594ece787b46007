import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { PrincipalId, TenantId } from '../../ids.js';
import type { Scope } from '../../auth/principal.js';
import type { ApiKeyRecord } from '../../auth/principal-record.js';
import { generateApiKey } from '../../auth/api-key.js';
import { newApiKeyId } from '../../auth/auth-ids.js';
import { apiKeyFromRow } from '../auth-rows.js';
import { rowsOf } from '../sql-helpers.js';
import { textArray } from '../text-array.js';

export interface NewApiKey {
  principalId: PrincipalId;
  /** When set, the principal must belong to this tenant. */
  tenantId?: TenantId | undefined;
  /** A label for operators ("ci", "laptop"). */
  name: string;
  /** Narrows the principal's scopes; null = the principal's scopes, whatever they become. */
  scopes: readonly Scope[] | null;
  expiresAt: Date | null;
}

export interface CreatedApiKey {
  key: ApiKeyRecord;
  /** The bearer token. This is its only copy: show it once and drop it. */
  token: string;
}

/**
 * Contract: one guarded insert. The key is created for an existing, enabled principal (and, when
 * `tenantId` is given, one in that tenant); its tenant is copied from the principal row, never
 * taken from the caller. Stores only sha256(secret). Returns null when the principal is missing,
 * disabled or in another tenant.
 */
export async function createApiKey(db: DbOrTx, k: NewApiKey): Promise<CreatedApiKey | null> {
  for (let attempt = 0; ; attempt++) {
    const generated = generateApiKey();
    try {
      const row = rowsOf(
        await db.execute(sql`
          insert into api_keys (id, principal_id, tenant_id, name, prefix, hash, scopes, expires_at)
          select ${newApiKeyId()}, p.id, p.tenant_id, ${k.name}, ${generated.prefix}, ${generated.hash},
                 ${textArray(k.scopes)}, ${k.expiresAt ? sql`${k.expiresAt.toISOString()}::timestamptz` : sql`null`}
          from principals p
          where p.id = ${k.principalId} and p.disabled_at is null
            ${k.tenantId ? sql`and p.tenant_id = ${k.tenantId}` : sql``}
          returning *`),
      )[0];
      return row ? { key: apiKeyFromRow(row), token: generated.token } : null;
    } catch (e: unknown) {
      // 60 random bits of prefix collide about never; if they do, mint another key.
      if (sqlState(e) !== '23505' || attempt >= 2) throw e;
    }
  }
}

/** The SQLSTATE of a Postgres error, also when a driver layer wrapped it as `cause`. */
function sqlState(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}
