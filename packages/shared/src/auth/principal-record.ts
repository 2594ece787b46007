import { z } from 'zod';
import type { PrincipalId, TenantId } from '../ids.js';
import type { Scope } from './principal.js';
import { ScopeSchema } from './principal.js';
import type { ApiKeyId } from './auth-ids.js';

/** A principal's name, unique within its tenant: what operators type (`--name ci-bot`). */
export const PrincipalNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, 'a name is 1-128 letters, digits, dot, dash, underscore or @, starting with a letter or digit');

/** A row of `principals` as the rest of the code sees it. */
export interface PrincipalRecord {
  id: PrincipalId;
  tenantId: TenantId;
  name: string;
  scopes: Scope[];
  createdAt: Date;
  disabledAt: Date | null;
}

/** An API key's metadata. The hash never leaves `db/`; the token is never stored. */
export interface ApiKeyRecord {
  id: ApiKeyId;
  principalId: PrincipalId;
  tenantId: TenantId;
  name: string;
  /** Public lookup part of the token (`sw_<prefix>_…`). */
  prefix: string;
  /** Narrower than the principal's scopes when set; null means "the principal's scopes". */
  scopes: Scope[] | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** Stored scope strings, keeping only the ones this build knows (an old or hand-edited row may hold others). */
export function knownScopes(values: readonly string[]): Scope[] {
  const out: Scope[] = [];
  for (const v of values) {
    const parsed = ScopeSchema.safeParse(v);
    if (parsed.success && !out.includes(parsed.data)) out.push(parsed.data);
  }
  return out;
}

/**
 * What a key may do: the principal's scopes, narrowed to the key's scopes when it has any.
 * `admin` on either side stands for every scope, so an admin principal's key scoped to
 * `jobs:read` can read only, and an `admin` key of a `jobs:read` principal can read only.
 */
export function effectiveScopes(principalScopes: readonly Scope[], keyScopes: readonly Scope[] | null): Set<Scope> {
  if (keyScopes === null) return new Set(principalScopes);
  if (keyScopes.includes('admin')) return new Set(principalScopes);
  const principalIsAdmin = principalScopes.includes('admin');
  return new Set(keyScopes.filter((s) => principalIsAdmin || principalScopes.includes(s)));
}
