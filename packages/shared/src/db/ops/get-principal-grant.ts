import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { PrincipalId, TenantId } from '../../ids.js';
import { rowsOf } from '../sql-helpers.js';

export interface PrincipalGrant {
  disabled: boolean;
  scopes: string[];
}

/**
 * Contract: the stored principal's state, for recovery re-validation (DESIGN §4). Null when the
 * principal has no row — a configured local principal or a JWT subject — which stores nothing
 * to re-check.
 */
export async function getPrincipalGrant(db: DbOrTx, tenantId: TenantId, principalId: PrincipalId): Promise<PrincipalGrant | null> {
  const row = rowsOf(
    await db.execute(sql`select disabled_at, scopes from principals where id = ${principalId} and tenant_id = ${tenantId}`),
  )[0];
  if (!row) return null;
  return { disabled: row.disabled_at != null, scopes: (row.scopes as string[] | null) ?? [] };
}
