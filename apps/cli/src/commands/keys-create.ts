import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createApiKey, createPrincipal, effectiveScopes, PrincipalNameSchema, ScopeSchema, TenantIdSchema } from '@stepwise/shared';
import type { CliConfig } from '../config.js';
import { CliError } from '../cli-error.js';
import { openMigratedDb } from '../db.js';
import { out } from '../output.js';
import { parseDuration } from '../parse-duration.js';

export const KEYS_CREATE_USAGE = `stepwise keys create --tenant T --name N --scopes a,b [--expires-in 30d] [--key-name K] [--json]

  Creates an API key for the principal N of tenant T (the principal is created with --scopes
  if it does not exist yet; an existing principal keeps its scopes, and the key gets the
  intersection). Prints the key once.

  --scopes      comma-separated: jobs:read, jobs:write, jobs:cancel, jobs:approve, admin, jobtype:<type>
  --expires-in  e.g. 12h, 30d, 8w (default: no expiry)
  --key-name    a label for this key (default: the principal name)
  --json        print one JSON object instead of text`;

function parsed<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new CliError(`${flag}: ${r.error.issues.map((i) => i.message).join('; ')}`);
  return r.data;
}

export async function keysCreateCommand(config: CliConfig, argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      tenant: { type: 'string' },
      name: { type: 'string' },
      scopes: { type: 'string' },
      'expires-in': { type: 'string' },
      'key-name': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  for (const flag of ['tenant', 'name', 'scopes'] as const) {
    if (!values[flag]) throw new CliError(`--${flag} is required.\n\n${KEYS_CREATE_USAGE}`);
  }
  const tenantId = parsed(TenantIdSchema, values.tenant!, '--tenant');
  const name = parsed(PrincipalNameSchema, values.name!, '--name');
  const keyName = values['key-name'] ? parsed(z.string().min(1).max(128), values['key-name'], '--key-name') : name;
  const scopes = parsed(z.array(ScopeSchema).min(1, 'give at least one scope'), values.scopes!.split(',').map((s) => s.trim()).filter(Boolean), '--scopes');
  const unique = [...new Set(scopes)];
  const expiresAt = values['expires-in'] ? new Date(Date.now() + parseDuration(values['expires-in'])) : null;

  const { db, close } = await openMigratedDb(config.DATABASE_URL);
  try {
    const { principal, created } = await createPrincipal(db, { tenantId, name, scopes: unique });
    if (principal.disabledAt) throw new CliError(`principal "${name}" of tenant "${tenantId}" is disabled; it gets no new keys`);
    const effective = [...effectiveScopes(principal.scopes, unique)];
    if (effective.length === 0) {
      throw new CliError(
        `principal "${name}" of tenant "${tenantId}" has scopes ${principal.scopes.join(', ') || '(none)'}, none of which --scopes names; a key cannot exceed its principal, so none was created`,
      );
    }
    const made = await createApiKey(db, { principalId: principal.id, tenantId, name: keyName, scopes: unique, expiresAt });
    if (!made) throw new CliError(`principal "${name}" of tenant "${tenantId}" was disabled meanwhile; no key was created`);
    if (values.json) {
      out(
        JSON.stringify({
          token: made.token,
          keyId: made.key.id,
          prefix: made.key.prefix,
          tenantId,
          principalId: principal.id,
          principalName: principal.name,
          principalCreated: created,
          scopes: effective,
          expiresAt: expiresAt?.toISOString() ?? null,
        }),
      );
      return;
    }
    out(created ? `Created principal "${name}" (${principal.id}) in tenant "${tenantId}" with scopes ${unique.join(', ')}.` : `Using the existing principal "${name}" (${principal.id}) of tenant "${tenantId}".`);
    out(`Created API key ${made.key.id} (prefix ${made.key.prefix}, name "${keyName}").`);
    out(`  scopes:  ${effective.join(', ')}`);
    if (!created && effective.length < unique.length) {
      out(`  note:    the principal has only ${principal.scopes.join(', ') || 'no scopes'}; a key cannot exceed its principal.`);
    }
    out(`  expires: ${expiresAt ? expiresAt.toISOString() : 'never'}`);
    out();
    out(`    ${made.token}`);
    out();
    out('Copy it now: it is shown only this once (Stepwise stores only a hash of it).');
    out(`HTTP clients send it as the header   Authorization: Bearer ${made.token}`);
    out(`A stdio server runs as it with       STEPWISE_API_KEY=${made.token}`);
    out(`Revoke it with                       stepwise keys revoke ${made.key.prefix}`);
  } finally {
    await close();
  }
}
