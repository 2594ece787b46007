import { createFirstApiKey } from '@stepwise/shared';
import type { DbOrTx, TenantId } from '@stepwise/shared';

/** The principal the quick start's first key belongs to. */
export const FIRST_KEY_PRINCIPAL = 'local-admin';

/**
 * Quick start: on a server whose `api_keys` table is empty, mints one admin key for `tenantId`
 * and returns the text that shows it (once) with a client config to paste. Null when any key
 * exists, which makes every later start silent.
 */
export async function firstKeyNotice(db: DbOrTx, tenantId: TenantId, mcpUrl: string): Promise<string | null> {
  const made = await createFirstApiKey(db, { tenantId, principalName: FIRST_KEY_PRINCIPAL, scopes: ['admin'], keyName: 'first-start' });
  if (!made) return null;
  const clientConfig = { mcpServers: { stepwise: { type: 'http', url: mcpUrl, headers: { Authorization: `Bearer ${made.token}` } } } };
  return [
    '',
    '================================================================================',
    ` Stepwise created its first API key: principal "${FIRST_KEY_PRINCIPAL}" of tenant "${tenantId}", scope admin.`,
    ' It is shown only this once (Stepwise keeps only a hash of it). Copy it now:',
    '',
    `   ${made.token}`,
    '',
    ' HTTP clients send it on every request as the header',
    `   Authorization: Bearer ${made.token}`,
    ' For example, in an MCP client config that speaks Streamable HTTP:',
    ...JSON.stringify(clientConfig, null, 2).split('\n').map((l) => `   ${l}`),
    '',
    ` Lost it, or want narrower keys? node apps/cli/dist/main.js keys create --tenant ${tenantId} --name <who> --scopes jobs:read,jobs:write`,
    ` Revoke this one with: node apps/cli/dist/main.js keys revoke ${made.key.prefix}`,
    '================================================================================',
    '',
  ].join('\n');
}
