import { parseArgs } from 'node:util';
import { queryAudit } from '@stepwise/shared';
import type { CliConfig } from '../config.js';
import { CliError } from '../cli-error.js';
import { openMigratedDb } from '../db.js';
import { out } from '../output.js';
import { parseDuration } from '../parse-duration.js';

export const AUDIT_USAGE = `stepwise audit [--tenant T] [--principal P] [--job J] [--action A] [--since ISO|duration] [--until ISO|duration] [--limit N] [--json]

  Reads the audit log, newest first (default the last 100 events). --since 1h means "in the last hour".`;

/** An ISO time, or a duration (e.g. 15m, 2h, 7d) meaning that long ago. */
function when(flag: string, v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  if (/^\d{4}-\d{2}-\d{2}/.test(v)) {
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw new CliError(`--${flag}: "${v}" is not a valid ISO time`);
    return d;
  }
  try {
    return new Date(Date.now() - parseDuration(v));
  } catch (e: unknown) {
    throw new CliError(`--${flag}: expected an ISO time or a duration such as 1h (${e instanceof Error ? e.message : String(e)})`);
  }
}

export async function auditCommand(config: CliConfig, argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      tenant: { type: 'string' },
      principal: { type: 'string' },
      job: { type: 'string' },
      action: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string', default: '100' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new CliError('--limit: a whole number from 1 to 10000');
  const { db, close } = await openMigratedDb(config.DATABASE_URL);
  try {
    const rows = await queryAudit(db, {
      tenantId: values.tenant,
      principalId: values.principal,
      targetJobId: values.job,
      action: values.action,
      since: when('since', values.since),
      until: when('until', values.until),
      limit,
    });
    if (values.json) {
      for (const r of rows) out(JSON.stringify(r));
      return;
    }
    if (rows.length === 0) {
      out('No audit events match.');
      return;
    }
    const table = [
      ['AT', 'TENANT', 'PRINCIPAL', 'ACTION', 'JOB', 'OUTCOME', 'ERROR', 'REQUEST'],
      ...rows.map((r) => [r.at.toISOString(), r.tenantId, r.principalId, r.action, r.targetJobId ?? '-', r.outcome, r.errorCode ?? '-', r.requestId ?? '-']),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
    for (const r of table) out(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  } finally {
    await close();
  }
}
