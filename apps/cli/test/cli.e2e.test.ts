import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticateApiKey } from '@stepwise/shared';
import { createTestDatabase } from '@stepwise/shared/testing';
import type { TestDatabase } from '@stepwise/shared/testing';

// The built CLI (`node apps/cli/dist/main.js`) against a real, per-file test database.

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url));
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('cli');
});
afterAll(async () => {
  await db?.drop();
});

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, DATABASE_URL: db.url, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('stepwise keys', () => {
  it('create --json: makes the principal and a key that authenticates with the given scopes', async () => {
    const r = await cli(['keys', 'create', '--tenant', 'acme', '--name', 'ci-bot', '--scopes', 'jobs:read,jobs:write', '--expires-in', '30d', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { token: string; keyId: string; prefix: string; principalCreated: boolean; scopes: string[]; expiresAt: string };
    expect(out).toMatchObject({ principalCreated: true, scopes: ['jobs:read', 'jobs:write'] });
    expect(out.token).toMatch(new RegExp(`^sw_${out.prefix}_[0-9A-Za-z]{32}$`));
    expect(new Date(out.expiresAt).getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const auth = await authenticateApiKey(db.db, out.token);
    expect(auth.ok).toBe(true);
    if (auth.ok) {
      expect(auth.principal.tenantId).toBe('acme');
      expect([...auth.principal.scopes].sort()).toEqual(['jobs:read', 'jobs:write']);
    }
  });

  it('create: prints the key once with how to use it; list never shows it; revoke by prefix stops it', async () => {
    const r = await cli(['keys', 'create', '--tenant', 'acme', '--name', 'laptop', '--scopes', 'jobs:read']);
    expect(r.code).toBe(0);
    const token = /^\s+(sw_\S+)$/m.exec(r.stdout)?.[1] ?? '';
    expect(token).toMatch(/^sw_/);
    expect(r.stdout).toContain('shown only this once');
    expect(r.stdout).toContain(`Authorization: Bearer ${token}`);
    const prefix = token.split('_')[1]!;

    const list = await cli(['keys', 'list', '--tenant', 'acme']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(prefix);
    expect(list.stdout).toContain('laptop');
    expect(list.stdout).not.toContain(token);
    expect(list.stdout).not.toContain(token.split('_')[2]!);

    const revoked = await cli(['keys', 'revoke', prefix]);
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    expect(revoked.stdout).toMatch(/^Revoked key key_/);
    expect(await authenticateApiKey(db.db, token)).toEqual({ ok: false, reason: 'revoked' });
    const again = await cli(['keys', 'revoke', token]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already revoked');
    const listed = JSON.parse((await cli(['keys', 'list', '--tenant', 'acme', '--json'])).stdout) as { prefix: string; state: string }[];
    expect(listed.find((k) => k.prefix === prefix)?.state).toBe('revoked');
  });

  it('an existing principal keeps its scopes: the key gets the intersection, or none is made', async () => {
    const narrowed = await cli(['keys', 'create', '--tenant', 'acme', '--name', 'ci-bot', '--scopes', 'jobs:read,jobs:cancel', '--json']);
    expect(JSON.parse(narrowed.stdout)).toMatchObject({ principalCreated: false, scopes: ['jobs:read'] });
    const none = await cli(['keys', 'create', '--tenant', 'acme', '--name', 'ci-bot', '--scopes', 'jobs:approve']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/none of which --scopes names/);
  });

  it('refuses bad input with a clear message and exit 1', async () => {
    const cases: [string[], RegExp][] = [
      [['keys', 'create', '--name', 'x', '--scopes', 'jobs:read'], /--tenant is required/],
      [['keys', 'create', '--tenant', 'acme', '--name', 'x', '--scopes', 'jobs:fly'], /--scopes: a scope is one of/],
      [['keys', 'create', '--tenant', 'ACME!', '--name', 'x', '--scopes', 'jobs:read'], /--tenant: a tenant id is/],
      [['keys', 'create', '--tenant', 'acme', '--name', 'x', '--scopes', 'jobs:read', '--expires-in', '30'], /not a duration/],
      [['keys', 'create', '--tenant', 'acme', '--nme', 'x'], /Unknown option '--nme'/],
      [['keys', 'revoke', 'key_00000000000000000000000000'], /no key key_0+/],
      [['keys', 'revoke'], /name exactly one key/],
      [['keys', 'rotate'], /unknown command "keys rotate"/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr.split('\n').filter(Boolean).length, args.join(' ')).toBeLessThan(15); // no stack traces
    }
    const badUrl = await cli(['keys', 'list'], { DATABASE_URL: 'mysql://nope' });
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toMatch(/DATABASE_URL: must be a postgres:\/\/ URL/);
  });

  it('migrate creates and migrates a new database; keys commands refuse an unmigrated one', async () => {
    const name = `stepwise_t_climigrate_${Date.now().toString(36)}`;
    const url = new URL(db.url);
    url.pathname = `/${name}`;
    // Any connection can create and drop other databases; the test database's will do.
    const root = db.sql;
    try {
      const missing = await cli(['keys', 'list'], { DATABASE_URL: url.toString() });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/run `stepwise migrate`/);
      await root.unsafe(`create database "${name}"`);
      const empty = await cli(['keys', 'list'], { DATABASE_URL: url.toString() });
      expect(empty.stderr).toMatch(/not migrated to this version: run `stepwise migrate` first/);
      await root.unsafe(`drop database "${name}" with (force)`);

      const migrated = await cli(['migrate'], { DATABASE_URL: url.toString() });
      expect(migrated).toMatchObject({ code: 0, stderr: '' });
      expect(migrated.stdout).toMatch(/^Migrations applied/);
      const list = await cli(['keys', 'list'], { DATABASE_URL: url.toString() });
      expect(list).toMatchObject({ code: 0, stdout: 'No keys yet. Create one with `stepwise keys create`.\n' });
    } finally {
      await root.unsafe(`drop database if exists "${name}" with (force)`);
    }
  });
});

describe('stepwise jobs retry', () => {
  it('reopens a failed job from its failed step, audits it, and dispatches it; refuses any other status', async () => {
    const { createJob, createJobQueue, createRedis, newJobId, unsafeCast } = await import('@stepwise/shared');
    const { uniquePrefix } = await import('@stepwise/shared/testing');
    const prefix = uniquePrefix('cli-retry');
    const id = newJobId();
    await createJob(
      db.db,
      {
        id,
        tenantId: unsafeCast.tenantId('acme'),
        principalId: unsafeCast.principalId('someone'),
        type: 'demo.steps',
        input: { steps: 2 },
        idempotencyKey: undefined,
        idempotencyHash: `h${id}`,
        requestHash: 'r',
        dedupWindowMs: 60_000,
        plan: [
          { name: 'step-001', effect: 'none' },
          { name: 'step-002', effect: 'none' },
        ],
        maxAttempts: 3,
        traceId: undefined,
      },
      { tenantId: 'acme', principalId: 'someone', action: 'start_job', outcome: 'success' },
    );
    const env = { REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', STEPWISE_QUEUE_PREFIX: prefix };

    const early = await cli(['jobs', 'retry', id, '--tenant', 'acme'], env);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('is pending; only a failed job can be retried');

    await db.sql`update jobs set status = 'failed', current_step = 'step-002', error = '{"code":"x","category":"internal","retryable":false,"message":"boom"}' where id = ${id}`;
    const r = await cli(['jobs', 'retry', id, '--tenant', 'acme', '--note', 'fixed'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Retrying ${id} from step "step-002"`);
    const [row] = await db.sql<{ status: string; attempt_group: number; error: unknown }[]>`select status, attempt_group, error from jobs where id = ${id}`;
    expect(row).toEqual({ status: 'pending', attempt_group: 2, error: null });
    const [audit] = await db.sql<{ n: number }[]>`select count(*)::int as n from audit_events where target_job_id = ${id} and action = 'retry_job' and principal_id = 'cli'`;
    expect(audit!.n).toBe(1);
    const redis = createRedis(env.REDIS_URL);
    const queue = createJobQueue(redis, prefix);
    try {
      expect(await queue.getJob(`h${id}`)).toBeDefined();
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
      await redis.quit();
    }
    const other = await cli(['jobs', 'retry', id, '--tenant', 'other'], env);
    expect(other.stderr).toContain(`no job ${id} in tenant "other"`);
  });
});
