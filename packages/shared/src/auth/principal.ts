import { z } from 'zod';
import type { PrincipalId, TenantId } from '../ids.js';

export const SCOPES = ['jobs:read', 'jobs:write', 'jobs:cancel', 'jobs:approve', 'admin'] as const;
/** A fixed scope, or `jobtype:<name>` to allow starting one job type only. */
export type Scope = (typeof SCOPES)[number] | `jobtype:${string}`;
export const ScopeSchema = z
  .string()
  .refine((s) => (SCOPES as readonly string[]).includes(s) || /^jobtype:[a-z0-9._-]+$/.test(s), {
    message: `a scope is one of ${SCOPES.join(', ')} or jobtype:<type>`,
  })
  .transform((s) => s as Scope);

/** Who is calling: every query is scoped by `tenantId`, every tool checks `scopes`. */
export interface Principal {
  tenantId: TenantId;
  principalId: PrincipalId;
  scopes: ReadonlySet<Scope>;
}

export function hasScope(p: Principal, scope: Scope): boolean {
  return p.scopes.has(scope) || p.scopes.has('admin');
}
