import { parseArgs } from 'node:util';
import { API_KEY_PREFIX_PATTERN, ApiKeyIdSchema, parseApiKey, revokeApiKey, TenantIdSchema } from '@stepwise/shared';
import type { CliConfig } from '../config.js';
import { CliError } from '../cli-error.js';
import { openMigratedDb } from '../db.js';
import { out } from '../output.js';

export const KEYS_REVOKE_USAGE = `stepwise keys revoke <keyId|prefix> [--tenant T]

  Revokes a key at once: the next HTTP request made with it gets 401. Accepts the key id
  (key_…), its 12-character prefix, or the whole key.`;

export async function keysRevokeCommand(config: CliConfig, argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: { tenant: { type: 'string' } }, strict: true, allowPositionals: true });
  if (positionals.length !== 1) throw new CliError(`name exactly one key to revoke.\n\n${KEYS_REVOKE_USAGE}`);
  const given = positionals[0]!.trim();
  const idOrPrefix = parseApiKey(given)?.prefix ?? given;
  if (!ApiKeyIdSchema.safeParse(idOrPrefix).success && !API_KEY_PREFIX_PATTERN.test(idOrPrefix)) {
    throw new CliError(`"${given}" is neither a key id (key_…) nor a 12-character key prefix; \`stepwise keys list\` shows both`);
  }
  const tenant = values.tenant === undefined ? undefined : TenantIdSchema.safeParse(values.tenant);
  if (tenant && !tenant.success) throw new CliError(`--tenant: ${tenant.error.issues[0]?.message}`);

  const { db, close } = await openMigratedDb(config.DATABASE_URL);
  try {
    const r = await revokeApiKey(db, { idOrPrefix, tenantId: tenant?.data });
    if (!r) throw new CliError(`no key ${idOrPrefix}${tenant ? ` in tenant "${tenant.data}"` : ''}`);
    const what = `key ${r.key.id} (prefix ${r.key.prefix}, "${r.key.name}", tenant "${r.key.tenantId}")`;
    out(r.changed ? `Revoked ${what}.` : `The ${what} was already revoked at ${r.key.revokedAt?.toISOString()}; nothing changed.`);
  } finally {
    await close();
  }
}
