import { createApiKey, createPrincipal } from '@stepwise/shared';
import type { CreatedApiKey, Scope, TenantId } from '@stepwise/shared';
import type { TestDatabase } from '@stepwise/shared/testing';

export const E2E_SCOPES: Scope[] = ['jobs:read', 'jobs:write', 'jobs:cancel', 'jobs:approve'];

/**
 * A real API key in a test database, made with the same ops the CLI uses: the principal
 * `(tenant, name)` is created when missing.
 */
export async function mintApiKey(
  db: TestDatabase,
  o: { tenant?: string; name?: string; scopes?: Scope[]; keyScopes?: Scope[] | null; expiresAt?: Date | null } = {},
): Promise<CreatedApiKey> {
  const tenantId = (o.tenant ?? 'local') as TenantId;
  const { principal } = await createPrincipal(db.db, { tenantId, name: o.name ?? 'e2e', scopes: o.scopes ?? E2E_SCOPES });
  const made = await createApiKey(db.db, {
    principalId: principal.id,
    tenantId,
    name: 'test',
    scopes: o.keyScopes ?? null,
    expiresAt: o.expiresAt ?? null,
  });
  if (!made) throw new Error(`could not create a key for ${tenantId}/${principal.name}`);
  return made;
}
