import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StepwiseError } from '@stepwise/shared';
import { DownstreamRegistry } from './downstream-registry.js';
import { DownstreamConfigSchema } from './downstream-config.js';
import { classifyCallError } from './call-errors.js';

// The pool against real processes: our bare JSON-RPC fixture (late and duplicate replies),
// server-everything over stdio (cancellation), and our bearer-checking Streamable HTTP fixture
// (401, session loss after a restart). No Postgres or Redis involved.

const FIXTURES = fileURLToPath(new URL('../test/fixtures/', import.meta.url));
const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const node = process.execPath;

let dir: string;
const registries: DownstreamRegistry[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepwise-pool-'));
});
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.close()));
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function registry(servers: Record<string, unknown>): DownstreamRegistry {
  const r = new DownstreamRegistry(DownstreamConfigSchema.parse({ servers }), { readEnv: (n) => (n === 'FIXTURE_TOKEN' ? 'from-env' : undefined) });
  registries.push(r);
  return r;
}

const call = (r: DownstreamRegistry, server: string, name: string, args: Record<string, unknown>, opts: { timeoutMs?: number; signal?: AbortSignal; key?: string } = {}) => {
  const ids: (string | number)[] = [];
  const promise = r.callTool(
    server,
    { name, arguments: args, _meta: { idempotencyKey: opts.key ?? `k-${Math.random()}` } },
    { signal: opts.signal ?? new AbortController().signal, timeoutMs: opts.timeoutMs ?? 10_000, onRequestId: (id) => ids.push(id) },
  );
  return { promise, ids };
};

const lines = async (file: string) =>
  (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id?: number; method?: string; params?: Record<string, unknown> });

describe('DownstreamRegistry (stdio)', () => {
  it('reuses one client; ignores a late reply after a timeout and a duplicate reply, by request id', async () => {
    const log = join(dir, 'raw-1.log');
    const r = registry({ raw: { stdio: { command: node, args: [join(FIXTURES, 'raw-server.mjs')], env: { RAW_LOG: log } } } });
    expect((await r.listTools('raw')).map((t) => t.name)).toEqual(['late', 'twice', 'fail']);

    const slow = call(r, 'raw', 'late', { marker: 'A', delayMs: 600 }, { timeoutMs: 150 });
    const err = await slow.promise.catch((e: unknown) => e);
    expect(classifyCallError(err, { server: 'raw', tool: 'late' }, true)).toMatchObject({ error: { category: 'timeout' }, ambiguous: true });

    // The timed-out request got a notifications/cancelled; its reply still comes (this server ignores cancels).
    const dup = call(r, 'raw', 'twice', { marker: 'B' });
    expect((await dup.promise).structuredContent).toEqual({ text: 'first B' });
    await new Promise((res) => setTimeout(res, 700)); // the late reply to A arrives now, and is dropped
    const after = call(r, 'raw', 'twice', { marker: 'C' });
    expect((await after.promise).structuredContent).toEqual({ text: 'first C' });

    const sent = await lines(log);
    const calls = sent.filter((m) => m.method === 'tools/call');
    expect(calls.map((m) => m.id)).toEqual([slow.ids[0], dup.ids[0], after.ids[0]]);
    expect(new Set(calls.map((m) => m.id)).size).toBe(3);
    expect(sent.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.requestId)).toEqual([slow.ids[0]]);
    expect(sent.filter((m) => m.method === 'initialize')).toHaveLength(1); // one connection, reused
  });

  it('restarts a stdio server that died, on next use', async () => {
    const pids = join(dir, 'pids-2.log');
    const r = registry({
      raw: { stdio: { command: node, args: [join(FIXTURES, 'stdio-tee.mjs'), join(dir, 'tee-2.log'), pids, '--', node, join(FIXTURES, 'raw-server.mjs')] } },
    });
    expect((await call(r, 'raw', 'twice', { marker: 'x' }).promise).structuredContent).toEqual({ text: 'first x' });
    const first = JSON.parse((await readFile(pids, 'utf8')).trim()) as { server: number };
    process.kill(first.server, 'SIGKILL');
    await new Promise((res) => setTimeout(res, 300));
    expect((await call(r, 'raw', 'twice', { marker: 'y' }).promise).structuredContent).toEqual({ text: 'first y' });
    expect((await readFile(pids, 'utf8')).trim().split('\n')).toHaveLength(2);
  });

  it('aborting the signal sends notifications/cancelled to server-everything for that request', async () => {
    const log = join(dir, 'tee-3.log');
    const r = registry({
      everything: { stdio: { command: node, args: [join(FIXTURES, 'stdio-tee.mjs'), log, join(dir, 'pids-3.log'), '--', node, EVERYTHING, 'stdio'] } },
    });
    const tools = await r.listTools('everything');
    expect(tools.find((t) => t.name === 'trigger-long-running-operation')?.annotations).toMatchObject({ readOnlyHint: true });
    const ac = new AbortController();
    const op = call(r, 'everything', 'trigger-long-running-operation', { duration: 30, steps: 30 }, { signal: ac.signal });
    await expect.poll(async () => (await lines(log)).some((m) => m.method === 'tools/call'), { timeout: 5000 }).toBe(true);
    ac.abort(new Error('stop'));
    await expect(op.promise).rejects.toThrow();
    await expect
      .poll(async () => (await lines(log)).filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.requestId), { timeout: 5000 })
      .toEqual([op.ids[0]]);
  });

  it('reports an unknown server by name', () => {
    const r = registry({});
    expect(() => r.server('nope')).toThrow(/No MCP server named "nope" is configured \(configured: none\)/);
  });
});

/** Starts the bearer-checking HTTP fixture; resolves with its URL once it listens. */
async function startAuthServer(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(node, [join(FIXTURES, 'auth-http-server.mjs')], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`auth fixture exited ${code}`)));
  });
  return { url: (JSON.parse(first) as { url: string }).url, child };
}

describe('DownstreamRegistry (Streamable HTTP)', () => {
  it('sends the bearer token from a file, read at connect time; a refused token evicts the client', async () => {
    const expected = join(dir, 'expected-4');
    const tokenFile = join(dir, 'token-4');
    await writeFile(expected, 'good');
    await writeFile(tokenFile, 'good\n');
    const { url } = await startAuthServer({ TOKEN_FILE: expected, CALL_LOG: join(dir, 'calls-4.log') });
    const r = registry({ auth: { http: { url }, auth: { bearerTokenFile: tokenFile } } });
    expect((await call(r, 'auth', 'note', { text: 'one' }).promise).structuredContent).toEqual({ noted: 'one' });

    await writeFile(expected, 'rotated'); // the server no longer accepts "good"
    const refused = await call(r, 'auth', 'note', { text: 'two' }).promise.catch((e: unknown) => e);
    expect(classifyCallError(refused, { server: 'auth', tool: 'note' }, true).error.category).toBe('unauthorized');

    await writeFile(tokenFile, 'rotated'); // an operator fixes the credential
    expect((await call(r, 'auth', 'note', { text: 'three' }).promise).structuredContent).toEqual({ noted: 'three' });
    expect((await readFile(join(dir, 'calls-4.log'), 'utf8')).trim().split('\n').map((l) => (JSON.parse(l) as { text: string }).text)).toEqual(['one', 'three']);
  });

  it('a missing credential is unauthorized before anything is sent', async () => {
    const r = registry({ auth: { http: { url: 'http://127.0.0.1:9/mcp' }, auth: { bearerTokenEnv: 'NOT_SET_ANYWHERE' } } });
    const e = await r.listTools('auth').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StepwiseError);
    expect(e).toMatchObject({ code: 'downstream_credential_missing', category: 'unauthorized' });
  });

  it('opens a new session when the server restarted and forgot the old one (404)', async () => {
    const expected = join(dir, 'expected-5');
    await writeFile(expected, 'from-env');
    const first = await startAuthServer({ TOKEN_FILE: expected, CALL_LOG: join(dir, 'calls-5.log') });
    const r = registry({ auth: { http: { url: first.url }, auth: { bearerTokenEnv: 'FIXTURE_TOKEN' } } });
    expect((await call(r, 'auth', 'note', { text: 'before' }).promise).structuredContent).toEqual({ noted: 'before' });
    first.child.kill('SIGKILL');
    await new Promise((res) => first.child.once('exit', res));
    const port = new URL(first.url).port;
    await startAuthServer({ TOKEN_FILE: expected, CALL_LOG: join(dir, 'calls-5.log'), PORT: port });
    expect((await call(r, 'auth', 'note', { text: 'after' }).promise).structuredContent).toEqual({ noted: 'after' });
    expect((await readFile(join(dir, 'calls-5.log'), 'utf8')).trim().split('\n')).toHaveLength(2);
  });
});
