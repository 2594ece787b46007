import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { Principal } from '../../auth/principal.js';
import type { ApiKeyId } from '../../auth/auth-ids.js';
import { unsafeApiKeyId } from '../../auth/auth-ids.js';
import { hashApiKeySecret, parseApiKey, verifyApiKeySecret } from '../../auth/api-key.js';
import { effectiveScopes, knownScopes } from '../../auth/principal-record.js';
import { unsafeCast } from '../../ids.js';
import { rowsOf } from '../sql-helpers.js';

/** Why a token was refused. For logs and tests only: callers all get the same 401. */
export type ApiKeyRefusal = 'malformed' | 'unknown' | 'revoked' | 'expired' | 'disabled';

export type ApiKeyAuthResult =
  | { ok: true; principal: Principal; keyId: ApiKeyId; expiresAt: Date | null }
  | { ok: false; reason: ApiKeyRefusal };

/** last_used_at is kept to this resolution, so a busy key is not a write per request. */
export const LAST_USED_RESOLUTION_S = 60;

/**
 * Contract: one statement. Finds the key by its prefix (unique index) together with its
 * principal, and stamps `last_used_at` (at most once per LAST_USED_RESOLUTION_S) only when the
 * key is usable: hash matches, not revoked, not expired, principal not disabled. The decision is
 * then made here on the returned row, comparing hashes with timingSafeEqual. Scopes of the
 * resulting principal: the principal's, narrowed to the key's when the key has any.
 */
export async function authenticateApiKey(db: DbOrTx, token: string): Promise<ApiKeyAuthResult> {
  const parts = parseApiKey(token);
  if (!parts) return { ok: false, reason: 'malformed' };
  const row = rowsOf(
    await db.execute(sql`
      with k as (
        select k.id, k.hash, p.tenant_id, p.id as principal_id, k.scopes as key_scopes, p.scopes as principal_scopes,
               k.expires_at, k.last_used_at,
               k.revoked_at is not null as revoked,
               k.expires_at is not null and k.expires_at <= now() as expired,
               p.disabled_at is not null as disabled
        from api_keys k join principals p on p.id = k.principal_id and p.tenant_id = k.tenant_id
        where k.prefix = ${parts.prefix}
      ), touch as (
        update api_keys a set last_used_at = now()
        from k
        where a.id = k.id and k.hash = ${hashApiKeySecret(parts.secret)}
          and not k.revoked and not k.expired and not k.disabled
          and (k.last_used_at is null or k.last_used_at < now() - ${sql.raw(`interval '${LAST_USED_RESOLUTION_S} seconds'`)})
        returning a.id
      )
      select k.*, (select count(*) from touch)::int as touched from k`),
  )[0];
  if (!row || !verifyApiKeySecret(parts.secret, String(row.hash))) return { ok: false, reason: 'unknown' };
  if (row.revoked === true) return { ok: false, reason: 'revoked' };
  if (row.expired === true) return { ok: false, reason: 'expired' };
  if (row.disabled === true) return { ok: false, reason: 'disabled' };
  const principalScopes = knownScopes((row.principal_scopes as string[] | null) ?? []);
  const keyScopes = row.key_scopes == null ? null : knownScopes(row.key_scopes as string[]);
  const expiresAt = row.expires_at == null ? null : new Date(row.expires_at as Date | string);
  return {
    ok: true,
    keyId: unsafeApiKeyId(String(row.id)),
    expiresAt,
    principal: {
      tenantId: unsafeCast.tenantId(String(row.tenant_id)),
      principalId: unsafeCast.principalId(String(row.principal_id)),
      scopes: effectiveScopes(principalScopes, keyScopes),
    },
  };
}
