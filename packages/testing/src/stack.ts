import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createTestDatabase, uniquePrefix } from '@stepwise/shared/testing';
import type { TestDatabase } from '@stepwise/shared/testing';
import { mintApiKey } from './api-keys.js';

// src/ and dist/ both sit two levels below the repository root.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const SERVER_MAIN = join(ROOT, 'apps/mcp-server/dist/main.js');
export const WORKER_MAIN = join(ROOT, 'apps/worker/dist/main.js');
export const CLI_MAIN = join(ROOT, 'apps/cli/dist/main.js');

export type TransportKind = 'stdio' | 'http';

/** A spawned process and the log lines it printed (pino JSON, parsed). */
export interface Proc {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  /** Resolves with the first log line matching `pred`. */
  waitFor(pred: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Resolves when the process ends, with its exit code or the signal that killed it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnNode(entry: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, [entry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<{ pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }>();
  const onLine = (raw: string) => {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      line = { msg: raw };
    }
    lines.push(line);
    for (const w of waiters) {
      if (w.pred(line)) {
        waiters.delete(w);
        w.resolve(line);
      }
    }
    if (process.env.STEPWISE_TEST_ECHO) process.stderr.write(`${raw}\n`);
  };
  createInterface({ input: child.stdout! }).on('line', onLine);
  createInterface({ input: child.stderr! }).on('line', onLine);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const exited = ended.then((e) => e.code);
  return {
    child,
    lines,
    exited: ended,
    waitFor(pred, timeoutMs = 20_000) {
      const hit = lines.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const w = { pred, resolve };
        waiters.add(w);
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`timed out waiting for a log line from ${entry}; last lines: ${JSON.stringify(lines.slice(-5))}`));
        }, timeoutMs);
        void exited.then((code) => {
          if (!waiters.has(w)) return;
          clearTimeout(timer);
          waiters.delete(w);
          reject(new Error(`${entry} exited with ${code}; last lines: ${JSON.stringify(lines.slice(-5))}`));
        });
        const origResolve = w.resolve;
        w.resolve = (l) => {
          clearTimeout(timer);
          origResolve(l);
        };
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

export interface Stack {
  db: TestDatabase;
  prefix: string;
  env: NodeJS.ProcessEnv;
  client: Client;
  transport: TransportKind;
  /** A key of the principal `e2e` in tenant `local` (all job scopes); the HTTP client sends it. */
  apiKey: string;
  workers: Proc[];
  server: Proc | undefined;
  startWorker(extra?: NodeJS.ProcessEnv): Promise<Proc>;
  call(name: string, args: Record<string, unknown>, onprogress?: (p: { progress: number; total?: number | undefined; message?: string | undefined }) => void): Promise<CallToolResult>;
  /**
   * Row counts of every job table, to prove a rejected call wrote nothing. Not audit_events:
   * every call, refused ones included, writes an audit row by design (DESIGN §8).
   */
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/**
 * The real product, end to end: a fresh database, a unique queue prefix, real worker processes
 * and the real server (a child process over stdio, or over HTTP), driven by the SDK's Client.
 */
export async function startStack(transport: TransportKind, options: { workers?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Stack> {
  const db = await createTestDatabase(`e2e${transport}`);
  // Minted before any server starts, so no server mints (and prints) a first-start key.
  const apiKey = (await mintApiKey(db)).token;
  defaultToken = apiKey;
  const prefix = uniquePrefix(`e2e-${transport}`);
  const dataDir = await mkdtemp(join(tmpdir(), 'stepwise-e2e-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    STEPWISE_QUEUE_PREFIX: prefix,
    STEPWISE_DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    STEPWISE_LEASE_MS: '3000',
    ...options.env,
  };
  const workers: Proc[] = [];
  const startWorker = async (extra: NodeJS.ProcessEnv = {}) => {
    const w = spawnNode(WORKER_MAIN, [], { ...env, ...extra });
    workers.push(w);
    await w.waitFor((l) => l.msg === 'worker started');
    return w;
  };
  for (let i = 0; i < (options.workers ?? 1); i++) await startWorker();

  const client = new Client({ name: 'stepwise-e2e', version: '1.0.0' });
  let server: Proc | undefined;
  if (transport === 'stdio') {
    const t = new StdioClientTransport({ command: process.execPath, args: [SERVER_MAIN, '--stdio'], env: env as Record<string, string>, stderr: 'pipe' });
    await client.connect(t);
  } else {
    server = spawnNode(SERVER_MAIN, ['--http'], { ...env, STEPWISE_HTTP_PORT: '0' });
    const ready = await server.waitFor((l) => l.msg === 'mcp server listening');
    await client.connect(new StreamableHTTPClientTransport(new URL(String(ready.url)), bearer(apiKey)));
  }

  return {
    db,
    prefix,
    env,
    client,
    transport,
    apiKey,
    workers,
    server,
    startWorker,
    async call(name, args, onprogress) {
      return (await client.callTool({ name, arguments: args }, undefined, {
        ...(onprogress ? { onprogress } : {}),
        timeout: 60_000,
      })) as CallToolResult;
    },
    async counts() {
      const rows = await db.sql<{ t: string; n: string }[]>`
        select 'jobs' as t, count(*)::text as n from jobs
        union all select 'job_steps', count(*)::text from job_steps
        union all select 'job_events', count(*)::text from job_events`;
      return Object.fromEntries(rows.map((r) => [r.t, Number(r.n)]));
    },
    async close() {
      await client.close().catch(() => undefined);
      await Promise.all([...workers.map((w) => w.stop()), server?.stop()]);
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

// The key of the stack this test file started last: what connectHttpClient sends by default,
// so a test that spawns its own HTTP server against the stack's database just connects.
let defaultToken: string | undefined;

/** Transport options that send `Authorization: Bearer <token>` on every request. */
export function bearer(token: string): { requestInit: RequestInit } {
  return { requestInit: { headers: { Authorization: `Bearer ${token}` } } };
}

/**
 * An SDK client connected over Streamable HTTP, authenticated with `token` (default: the API key
 * of the stack started last in this process; pass null to send no credential).
 */
export async function connectHttpClient(url: string, name = 'stepwise-test', token: string | null = defaultToken ?? null): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), token === null ? {} : bearer(token)));
  return client;
}

/** The structured payload of a tool result, typed loosely so assertions can reach into it. */
/* eslint-disable @typescript-eslint/no-explicit-any -- test-only accessor; shapes are asserted, not assumed */
export function sc(r: CallToolResult): Record<string, any> {
  return (r.structuredContent ?? {}) as Record<string, any>;
}
/* eslint-enable @typescript-eslint/no-explicit-any */
