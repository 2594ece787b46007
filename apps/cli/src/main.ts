#!/usr/bin/env node
import { isTransientInfrastructureError } from '@stepwise/shared';
import { loadCliConfig } from './config.js';
import type { CliConfig } from './config.js';
import { CliError } from './cli-error.js';
import { err, out, safeUrl } from './output.js';
import { migrateCommand } from './commands/migrate.js';
import { KEYS_CREATE_USAGE, keysCreateCommand } from './commands/keys-create.js';
import { KEYS_REVOKE_USAGE, keysRevokeCommand } from './commands/keys-revoke.js';
import { KEYS_LIST_USAGE, keysListCommand } from './commands/keys-list.js';
import { AUDIT_USAGE, auditCommand } from './commands/audit.js';
import { JOBS_RETRY_USAGE, jobsRetryCommand } from './commands/jobs-retry.js';

const USAGE = `Usage: stepwise <command>

  migrate                 create the database if missing and apply migrations
  keys create …           create an API key (and its principal if missing); prints it once
  keys list [--tenant T]  list keys
  keys revoke <id|prefix> revoke a key
  audit …                 query the audit log (by tenant, principal, job, action, time)
  jobs retry <jobId> …    re-run a failed job from the failed step

Reads DATABASE_URL (default postgres://postgres@127.0.0.1:5432/stepwise).

${KEYS_CREATE_USAGE}

${KEYS_REVOKE_USAGE}

${KEYS_LIST_USAGE}

${AUDIT_USAGE}

${JOBS_RETRY_USAGE}`;

let config: CliConfig | undefined;

async function run(argv: string[]): Promise<void> {
  const [group, sub, ...rest] = argv;
  if (group === undefined || group === 'help' || group === '--help' || group === '-h') {
    out(USAGE);
    return;
  }
  config = loadCliConfig();
  if (group === 'migrate' && sub === undefined) return migrateCommand(config);
  if (group === 'audit') return auditCommand(config, argv.slice(1));
  if (group === 'jobs' && sub === 'retry') return jobsRetryCommand(config, rest);
  if (group === 'keys') {
    if (sub === 'create') return keysCreateCommand(config, rest);
    if (sub === 'list') return keysListCommand(config, rest);
    if (sub === 'revoke') return keysRevokeCommand(config, rest);
  }
  throw new CliError(`unknown command "${argv.join(' ')}"; \`stepwise --help\` lists the commands`);
}

/** The error's code, also when a driver layer wrapped the original as `cause`. */
function codeOf(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

function describe(e: unknown): string {
  if (e instanceof CliError) return e.message;
  const code = codeOf(e);
  // node:util parseArgs: unknown or malformed options.
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) return `${(e as Error).message}. See \`stepwise --help\`.`;
  if (code === '3D000') return `the database does not exist: run \`stepwise migrate\` (it creates it)`;
  if (isTransientInfrastructureError(e)) {
    return `cannot reach Postgres at ${config ? safeUrl(config.DATABASE_URL) : 'DATABASE_URL'}: ${(e as Error).message}`;
  }
  return e instanceof Error ? e.message : String(e);
}

try {
  await run(process.argv.slice(2));
} catch (e: unknown) {
  err(`stepwise: ${describe(e)}`);
  process.exitCode = 1;
}
