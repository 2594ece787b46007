import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { TenantId } from '../../ids.js';
import type { Scope } from '../../auth/principal.js';
import type { PrincipalRecord } from '../../auth/principal-record.js';
import { newPrincipalId } from '../../auth/auth-ids.js';
import { principalFromRow } from '../auth-rows.js';
import { rowsOf } from '../sql-helpers.js';
import { textArray } from '../text-array.js';

export interface NewPrincipal {
  tenantId: TenantId;
  /** Unique within the tenant (see PrincipalNameSchema). */
  name: string;
  scopes: readonly Scope[];
}

/**
 * Contract: one statement. Inserts the principal `(tenantId, name)` unless it exists, and returns
 * the row either way with `created` telling which. An existing principal is returned unchanged:
 * its scopes are NOT widened to `scopes` (granting more is a deliberate act, not a side effect).
 */
export async function createPrincipal(db: DbOrTx, p: NewPrincipal): Promise<{ principal: PrincipalRecord; created: boolean }> {
  // A concurrent insert of the same name that commits after this statement's snapshot makes the
  // insert do nothing and the read see nothing; the second run then reads the committed row.
  for (let attempt = 0; ; attempt++) {
    const row = rowsOf(
      await db.execute(sql`
        with ins as (
          insert into principals (id, tenant_id, name, scopes)
          values (${newPrincipalId()}, ${p.tenantId}, ${p.name}, ${textArray(p.scopes)})
          on conflict (tenant_id, name) do nothing
          returning *, true as created
        )
        select * from ins
        union all
        select *, false as created from principals
        where tenant_id = ${p.tenantId} and name = ${p.name} and not exists (select 1 from ins)`),
    )[0];
    if (row) return { principal: principalFromRow(row), created: row.created === true };
    if (attempt >= 2) throw new Error(`principal ${p.tenantId}/${p.name} could be neither created nor read`);
  }
}
