import type { ApiKeyRecord, PrincipalRecord } from '../auth/principal-record.js';
import { knownScopes } from '../auth/principal-record.js';
import { unsafeApiKeyId } from '../auth/auth-ids.js';
import { unsafeCast } from '../ids.js';

// Row mappers for `principals` and `api_keys` (snake_case, as postgres.js returns them).
// Like rows.ts, the only code outside schema.ts that knows these column names.

type Row = Record<string, unknown>;

const date = (v: unknown): Date | null => (v == null ? null : v instanceof Date ? v : new Date(String(v)));
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

export function principalFromRow(r: Row): PrincipalRecord {
  return {
    id: unsafeCast.principalId(String(r.id)),
    tenantId: unsafeCast.tenantId(String(r.tenant_id)),
    name: String(r.name),
    scopes: knownScopes(strings(r.scopes)),
    createdAt: date(r.created_at) ?? new Date(0),
    disabledAt: date(r.disabled_at),
  };
}

export function apiKeyFromRow(r: Row): ApiKeyRecord {
  return {
    id: unsafeApiKeyId(String(r.id)),
    principalId: unsafeCast.principalId(String(r.principal_id)),
    tenantId: unsafeCast.tenantId(String(r.tenant_id)),
    name: String(r.name),
    prefix: String(r.prefix),
    scopes: r.scopes == null ? null : knownScopes(strings(r.scopes)),
    createdAt: date(r.created_at) ?? new Date(0),
    expiresAt: date(r.expires_at),
    revokedAt: date(r.revoked_at),
    lastUsedAt: date(r.last_used_at),
  };
}
