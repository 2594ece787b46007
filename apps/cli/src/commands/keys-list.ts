import { parseArgs } from 'node:util';
import { listApiKeys, TenantIdSchema } from '@stepwise/shared';
import type { ApiKeyListing } from '@stepwise/shared';
import type { CliConfig } from '../config.js';
import { CliError } from '../cli-error.js';
import { openMigratedDb } from '../db.js';
import { out } from '../output.js';

export const KEYS_LIST_USAGE = `stepwise keys list [--tenant T] [--json]

  Lists keys (never the secrets): id, prefix, tenant, principal, scopes, state, expiry, last use.`;

function stateOf(k: ApiKeyListing, now: Date): string {
  if (k.revokedAt) return 'revoked';
  if (k.principalDisabledAt) return 'disabled';
  if (k.expiresAt && k.expiresAt <= now) return 'expired';
  return 'active';
}

const day = (d: Date | null, none: string) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') : none);

export async function keysListCommand(config: CliConfig, argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { tenant: { type: 'string' }, json: { type: 'boolean', default: false } }, strict: true });
  const tenant = values.tenant === undefined ? undefined : TenantIdSchema.safeParse(values.tenant);
  if (tenant && !tenant.success) throw new CliError(`--tenant: ${tenant.error.issues[0]?.message}`);

  const { db, close } = await openMigratedDb(config.DATABASE_URL);
  try {
    const keys = await listApiKeys(db, { tenantId: tenant?.data });
    const now = new Date();
    if (values.json) {
      out(JSON.stringify(keys.map((k) => ({ ...k, state: stateOf(k, now) }))));
      return;
    }
    if (keys.length === 0) {
      out(tenant ? `No keys in tenant "${tenant.data}".` : 'No keys yet. Create one with `stepwise keys create`.');
      return;
    }
    const rows = [
      ['ID', 'PREFIX', 'TENANT', 'PRINCIPAL', 'NAME', 'SCOPES', 'STATE', 'EXPIRES', 'LAST USED'],
      ...keys.map((k) => [
        k.id,
        k.prefix,
        k.tenantId,
        k.principalName,
        k.name,
        k.scopes ? k.scopes.join(',') : '(principal)',
        stateOf(k, now),
        day(k.expiresAt, 'never'),
        day(k.lastUsedAt, '-'),
      ]),
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) out(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  } finally {
    await close();
  }
}
