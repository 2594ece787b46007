import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { revokeApiKey } from '@stepwise/shared';
import type { TestDatabase } from '@stepwise/testing';
import { createTestDatabase, mintApiKey, sc, SERVER_MAIN, uniquePrefix } from '@stepwise/testing';

// DESIGN §8: stdio runs as a principal named by config, an API key or the explicit local
// principal, and says which on stderr (stdout belongs to the protocol).

let db: TestDatabase;
let env: Record<string, string>;

beforeAll(async () => {
  db = await createTestDatabase('stdioprn');
  const base: Record<string, string | undefined> = { ...process.env, DATABASE_URL: db.url, STEPWISE_QUEUE_PREFIX: uniquePrefix('stdio-prn'), LOG_LEVEL: 'info' };
  delete base.STEPWISE_API_KEY;
  delete base.STEPWISE_PRINCIPAL;
  env = base as Record<string, string>;
});
afterAll(async () => {
  await db?.drop();
});

/** Runs the stdio server until it is ready (or exits), then closes its stdin; returns both streams. */
async function runStdio(extra: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; lines: Record<string, unknown>[] }> {
  const child = spawn(process.execPath, [SERVER_MAIN, '--stdio'], { env: { ...env, ...extra }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.includes('mcp server ready on stdio')) child.stdin.end();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const lines = stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, stdout, stderr, lines };
}

describe('stdio principal', () => {
  it('with STEPWISE_API_KEY: authenticated at start, jobs belong to the key\'s principal', async () => {
    const made = await mintApiKey(db, { tenant: 'acme', name: 'stdio-bot' });
    const client = new Client({ name: 'stdio-principal', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [SERVER_MAIN, '--stdio'], env: { ...env, STEPWISE_API_KEY: made.token }, stderr: 'pipe' }));
    try {
      const r = await client.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: 'stdio-key' } });
      const [row] = await db.sql<{ principal_id: string; tenant_id: string }[]>`select principal_id, tenant_id from jobs where id = ${sc(r as never).jobId}`;
      expect(row).toEqual({ principal_id: made.key.principalId, tenant_id: 'acme' });
    } finally {
      await client.close();
    }
  });

  it('with a revoked STEPWISE_API_KEY: refuses to start, says why on stderr, exit 1', async () => {
    const made = await mintApiKey(db, { name: 'stdio-revoked' });
    await revokeApiKey(db.db, { idOrPrefix: made.key.id });
    const r = await runStdio({ STEPWISE_API_KEY: made.token });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('STEPWISE_API_KEY was refused (revoked)');
    expect(r.stderr).not.toContain(made.token);
  });

  it('with nothing set: runs as the default local principal and warns on stderr, stdout stays clean', async () => {
    const r = await runStdio({});
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const warn = r.lines.find((l) => String(l.msg).startsWith('running as the default local principal'));
    expect(warn).toMatchObject({ level: 40, tenantId: 'local', principalId: 'local-operator', principalSource: 'default' });
  });

  it('with STEPWISE_PRINCIPAL set: runs as it without a warning; setting both it and a key is refused', async () => {
    const r = await runStdio({ STEPWISE_TENANT: 'acme', STEPWISE_PRINCIPAL: 'ops-bot', STEPWISE_SCOPES: 'jobs:read' });
    expect(r.lines.find((l) => l.msg === 'mcp server ready on stdio')).toMatchObject({
      tenantId: 'acme',
      principalId: 'ops-bot',
      scopes: ['jobs:read'],
      principalSource: 'STEPWISE_PRINCIPAL',
    });
    expect(r.lines.some((l) => l.level === 40)).toBe(false);

    const { token } = await mintApiKey(db, { name: 'both' });
    const both = await runStdio({ STEPWISE_PRINCIPAL: 'ops-bot', STEPWISE_API_KEY: token });
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('set STEPWISE_API_KEY or STEPWISE_PRINCIPAL, not both');
  });
});
