import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { revokeApiKey } from '@stepwise/shared';
import type { Stack } from '@stepwise/testing';
import { connectHttpClient, mintApiKey, sc, startStack } from '@stepwise/testing';

// The hostile-input suite (issue 5, item 7): malformed JSON-RPC, wrong types, huge and deeply
// nested inputs, unicode edge cases, SQL metacharacters and bad credentials, all through real HTTP
// against the running server. Every case must get a clear error (HTTP 4xx with a JSON-RPC error,
// or an isError tool result with {code, category, retryable, message}) — never a 500, never a
// hang — and leave the row counts of the state tables unchanged.

const MAX_INPUT_BYTES = 4096;
const MAX_INPUT_DEPTH = 16;
const BODY_LIMIT = 256 * 1024;
const RESULTS = fileURLToPath(new URL('../../../.test-results/hostile-input.json', import.meta.url));
const UNKNOWN = 'job_00000000000000000000000000';
const TOOLS = ['start_job', 'get_job_status', 'cancel_job', 'list_jobs', 'list_job_types', 'respond_to_job', 'retry_job', 'get_job_history'];
const JOB_ID_TOOLS = ['get_job_status', 'cancel_job', 'respond_to_job', 'retry_job', 'get_job_history'];

let stack: Stack;
let url: string;
let acme: Client; // tenant "local": the stack's key
let globex: Client; // tenant "globex"
let jobA: string; // acme's job (pending: no worker runs, so it stays put)

interface Outcome {
  group: string;
  case: string;
  http: number;
  /** The JSON-RPC error code, when the answer was one. */
  rpcError?: number;
  /** The tool error code (isError results), or "success" for a clean success. */
  tool?: string;
  category?: string;
}
const outcomes: Outcome[] = [];
const toolErrorRequestIds: string[] = [];

// ---------------------------------------------------------------------------------------------

async function counts(): Promise<Record<string, number>> {
  const rows = await stack.db.sql<{ t: string; n: string }[]>`
    select 'jobs' as t, count(*)::text as n from jobs
    union all select 'job_steps', count(*)::text from job_steps
    union all select 'job_events', count(*)::text from job_events
    union all select 'api_keys', count(*)::text from api_keys
    union all select 'principals', count(*)::text from principals`;
  return Object.fromEntries(rows.map((r) => [r.t, Number(r.n)]));
}

/** Runs `fn` and proves it wrote nothing to the state tables. */
async function unchanged<T>(fn: () => Promise<T>): Promise<T> {
  const before = await counts();
  const out = await fn();
  expect(await counts()).toEqual(before);
  return out;
}

interface HttpAnswer {
  status: number;
  contentType: string;
  /** Every JSON-RPC message in the body (one for application/json, each `data:` of an SSE stream). */
  messages: Record<string, unknown>[];
  raw: string;
}

/** POSTs `body` (a string is sent as is) to /mcp; a hang fails the test after 20 s. */
async function post(body: unknown, o: { token?: string | null; headers?: Record<string, string> } = {}): Promise<HttpAnswer> {
  const token = o.token === undefined ? stack.apiKey : o.token;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...o.headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const raw = await res.text();
  const contentType = res.headers.get('content-type') ?? '';
  const messages: Record<string, unknown>[] = [];
  const parse = (s: string) => {
    const v = JSON.parse(s) as unknown;
    for (const m of Array.isArray(v) ? v : [v]) messages.push(m as Record<string, unknown>);
  };
  if (contentType.includes('text/event-stream')) {
    for (const line of raw.split('\n')) if (line.startsWith('data:')) parse(line.slice(5).trim());
  } else if (raw.trim()) {
    parse(raw);
  }
  return { status: res.status, contentType, messages, raw };
}

/** A protocol-level case: a 4xx, or a 200 whose every message is a JSON-RPC error; never a 5xx. */
async function protocolCase(group: string, name: string, body: unknown, o: { token?: string | null; headers?: Record<string, string> } = {}): Promise<HttpAnswer> {
  const a = await unchanged(() => post(body, o));
  expect(a.status, `${name}: ${a.raw.slice(0, 300)}`).toBeLessThan(500);
  expect(a.messages.length, `${name}: a JSON-RPC answer`).toBeGreaterThan(0);
  for (const m of a.messages) {
    expect(m.jsonrpc).toBe('2.0');
    const err = m.error as { code?: unknown; message?: unknown } | undefined;
    expect(err, `${name}: ${JSON.stringify(m).slice(0, 300)}`).toBeDefined();
    expect(typeof err!.code).toBe('number');
    expect(typeof err!.message).toBe('string');
  }
  if (a.status === 200) expect(a.messages.every((m) => m.error)).toBe(true);
  else expect(a.status).toBeGreaterThanOrEqual(400);
  const code = (a.messages[0]!.error as { code: number }).code;
  outcomes.push({ group, case: name, http: a.status, rpcError: code });
  return a;
}

/** The tool error payload of an isError result, checked for the full shape. */
function toolError(r: CallToolResult, name: string): { code: string; category: string; retryable: boolean; message: string; requestId: string } {
  expect(r.isError, `${name}: ${JSON.stringify(r).slice(0, 400)}`).toBe(true);
  const p = sc(r);
  expect(typeof p.code).toBe('string');
  expect(typeof p.category).toBe('string');
  expect(typeof p.retryable).toBe('boolean');
  expect(typeof p.message).toBe('string');
  expect(p.category, `${name}: an internal error is a bug (${String(p.message)})`).not.toBe('internal');
  return p as never;
}

/**
 * A tool-level case through the SDK client. `expect` names the categories that count as a clear
 * answer; 'success' allows a clean success (for inputs that are merely odd, like unicode).
 */
async function toolCase(
  group: string,
  name: string,
  tool: string,
  args: Record<string, unknown>,
  o: { client?: Client; expect?: string[]; code?: string; writes?: boolean } = {},
): Promise<CallToolResult> {
  const client = o.client ?? acme;
  const allowed = o.expect ?? ['invalid_input'];
  const run = () => client.callTool({ name: tool, arguments: args }, undefined, { timeout: 30_000 }) as Promise<CallToolResult>;
  const r = o.writes ? await run() : await unchanged(run);
  if (r.isError) {
    const p = toolError(r, name);
    expect(allowed, `${name}: ${p.code}/${p.category}: ${p.message}`).toContain(p.category);
    if (o.code) expect(p.code, name).toBe(o.code);
    toolErrorRequestIds.push(p.requestId);
    outcomes.push({ group, case: name, http: 200, tool: p.code, category: p.category });
  } else {
    expect(allowed, `${name}: succeeded: ${JSON.stringify(r.structuredContent).slice(0, 300)}`).toContain('success');
    outcomes.push({ group, case: name, http: 200, tool: 'success' });
  }
  return r;
}

/** A raw `tools/call` over fetch (for argument shapes the SDK client would not send). */
const rawCall = (id: unknown, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/**
 * A tool-level case sent with fetch (for arguments the SDK client cannot even serialize, such as
 * 5000-deep nesting): the answer must be a tool result in `allowed`, or a 4xx JSON-RPC error.
 */
async function rawToolCase(group: string, name: string, tool: string, argsJson: string, allowed: string[], code?: string): Promise<void> {
  // Built as text: JSON.stringify itself overflows the stack on such nesting.
  const a = await unchanged(() => post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":${argsJson}}}`));
  expect(a.status, `${name}: ${a.raw.slice(0, 300)}`).toBeLessThan(500);
  const m = a.messages[0]!;
  expect(m, name).toBeDefined();
  if (m.error) {
    expect(a.status).toBeGreaterThanOrEqual(400);
    outcomes.push({ group, case: name, http: a.status, rpcError: (m.error as { code: number }).code });
    return;
  }
  const r = m.result as CallToolResult;
  if (r.isError) {
    const p = toolError(r, name);
    expect(allowed, `${name}: ${p.code}/${p.category}: ${p.message}`).toContain(p.category);
    if (code) expect(p.code, name).toBe(code);
    toolErrorRequestIds.push(p.requestId);
    outcomes.push({ group, case: name, http: a.status, tool: p.code, category: p.category });
  } else {
    expect(allowed, name).toContain('success');
    outcomes.push({ group, case: name, http: a.status, tool: 'success' });
  }
}

/** A pending job of acme's, made outside any measured case. */
async function pendingJob(key: string): Promise<string> {
  const r = (await acme.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: key } })) as CallToolResult;
  expect(r.isError).toBeFalsy();
  return String(sc(r).jobId);
}

/** Puts a job in a state a worker would, without running one: tests only aim input at it. */
async function forceState(jobId: string, state: 'failed' | 'waiting'): Promise<void> {
  if (state === 'failed') {
    const error = JSON.stringify({ code: 'boom', category: 'invalid_input', retryable: false, message: 'boom' });
    await stack.db.sql`update jobs set status = 'failed', finished_at = now(), error = ${error}::jsonb where id = ${jobId}`;
  } else {
    await stack.db.sql`update jobs set status = 'waiting', waiting_reason = 'needs_approval', current_step = 'step-001' where id = ${jobId}`;
  }
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  stack = await startStack('http', {
    workers: 0,
    env: {
      STEPWISE_MAX_INPUT_BYTES: String(MAX_INPUT_BYTES),
      STEPWISE_MAX_INPUT_DEPTH: String(MAX_INPUT_DEPTH),
      STEPWISE_HTTP_BODY_LIMIT_BYTES: String(BODY_LIMIT),
    },
  });
  url = String(stack.server!.lines.find((l) => l.msg === 'mcp server listening')!.url);
  acme = stack.client;
  const other = await mintApiKey(stack.db, { tenant: 'globex', name: 'intruder' });
  globex = await connectHttpClient(url, 'globex-client', other.token);
  jobA = await pendingJob('hostile-a');
});

afterAll(async () => {
  await mkdir(dirname(RESULTS), { recursive: true });
  const byGroup: Record<string, number> = {};
  for (const o of outcomes) byGroup[o.group] = (byGroup[o.group] ?? 0) + 1;
  await writeFile(RESULTS, `${JSON.stringify({ total: outcomes.length, byGroup, cases: outcomes }, null, 2)}\n`);
  await globex?.close().catch(() => undefined);
  await stack?.close();
});

// ---------------------------------------------------------------------------------------------

describe('malformed JSON-RPC', () => {
  const G = 'malformed-jsonrpc';

  it('a well-formed initialize-less tools/call works in stateless mode (the baseline the cases break)', async () => {
    const a = await post(rawCall(1, 'list_jobs', {}));
    expect(a.status).toBe(200);
    expect(a.messages[0]).toMatchObject({ jsonrpc: '2.0', id: 1, result: { structuredContent: { jobs: expect.any(Array) } } });
  });

  it.each<[string, unknown]>([
    ['invalid JSON body', '{"jsonrpc": "2.0", "id": 1, "method": '],
    ['empty body', ''],
    ['body is a JSON string', '"tools/call"'],
    ['body is a JSON number', '42'],
    ['body is JSON null', 'null'],
    ['body is JSON true', 'true'],
    ['missing jsonrpc', { id: 1, method: 'tools/list', params: {} }],
    ['jsonrpc "1.0"', { jsonrpc: '1.0', id: 1, method: 'tools/list', params: {} }],
    ['jsonrpc as number 2', { jsonrpc: 2, id: 1, method: 'tools/list', params: {} }],
    ['missing method', { jsonrpc: '2.0', id: 1, params: {} }],
    ['method is a number', { jsonrpc: '2.0', id: 1, method: 7, params: {} }],
    ['unknown method', { jsonrpc: '2.0', id: 1, method: 'jobs/drop_all', params: {} }],
    ['id is an object', { jsonrpc: '2.0', id: { $ne: null }, method: 'tools/list', params: {} }],
    ['id is an array', { jsonrpc: '2.0', id: [1, 2], method: 'tools/list', params: {} }],
    ['id is a boolean', { jsonrpc: '2.0', id: true, method: 'tools/list', params: {} }],
    ['batch of garbage', [1, 'x', null, { foo: 'bar' }]],
    ['batch mixing garbage and a call', [{ nonsense: true }, rawCall(2, 'list_jobs', {})]],
    ['params is a string', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'start_job' }],
    ['params is an array', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: ['start_job', {}] }],
    ['tools/call without a tool name', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } }],
    ['tools/call with a numeric tool name', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 7, arguments: {} } }],
    ['tools/call of an unknown tool', rawCall(1, 'drop_all_jobs', {})],
    ['arguments is a string', rawCall(1, 'start_job', '{"type":"demo.steps"}')],
    ['arguments is an array', rawCall(1, 'list_job_types', [1, 2, 3])],
    ['arguments is a number', rawCall(1, 'list_jobs', 5)],
    ['resources/read of a non-job uri', { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: "job://' OR 1=1 --" } }],
    ['resources/read of an unknown job', { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: `job://${UNKNOWN}` } }],
  ])('%s', async (name, body) => {
    await protocolCase(G, name, body);
  });

  it('an empty batch gets a 4xx and writes nothing', async () => {
    const a = await unchanged(() => post([]));
    expect(a.status, a.raw).toBeGreaterThanOrEqual(400);
    expect(a.status, a.raw).toBeLessThan(500);
    outcomes.push({ group: G, case: 'empty batch', http: a.status, ...(a.messages[0]?.error ? { rpcError: (a.messages[0].error as { code: number }).code } : {}) });
  });

  it('a JSON-RPC notification (no id) of garbage gets no 5xx and writes nothing', async () => {
    const a = await unchanged(() => post({ jsonrpc: '2.0', method: 'notifications/whatever', params: { x: 1 } }));
    expect(a.status).toBeLessThan(500);
    expect(a.status).toBeGreaterThanOrEqual(200);
    outcomes.push({ group: G, case: 'garbage notification', http: a.status });
  });

  it('wrong content-type gets a 4xx JSON-RPC error', async () => {
    await protocolCase(G, 'content-type text/plain', JSON.stringify(rawCall(1, 'list_jobs', {})), { headers: { 'content-type': 'text/plain' } });
  });

  it('an Accept header without text/event-stream gets a 4xx JSON-RPC error', async () => {
    await protocolCase(G, 'accept application/json only', rawCall(1, 'list_jobs', {}), { headers: { accept: 'application/json' } });
  });
});

describe('wrong argument types, every tool', () => {
  const G = 'wrong-types';
  const cases: [string, string, Record<string, unknown>][] = [
    ['start_job type is a number', 'start_job', { type: 123, input: { steps: 1 } }],
    ['start_job type is null', 'start_job', { type: null, input: { steps: 1 } }],
    ['start_job type is an array', 'start_job', { type: ['demo.steps'], input: { steps: 1 } }],
    ['start_job type is empty', 'start_job', { type: '', input: { steps: 1 } }],
    ['start_job type is unknown', 'start_job', { type: 'no.such.type', input: {} }],
    ['start_job missing type', 'start_job', { input: { steps: 1 } }],
    ['start_job input is a string', 'start_job', { type: 'demo.steps', input: '{"steps":1}' }],
    ['start_job input is null', 'start_job', { type: 'demo.steps', input: null }],
    ['start_job input has wrong field types', 'start_job', { type: 'demo.steps', input: { steps: 'many' } }],
    ['start_job idempotencyKey is a number', 'start_job', { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: 42 }],
    ['start_job idempotencyKey is an object', 'start_job', { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: { $gt: '' } }],
    ['start_job waitSeconds is a string', 'start_job', { type: 'demo.steps', input: { steps: 1 }, waitSeconds: '10' }],
    ['start_job waitSeconds is negative', 'start_job', { type: 'demo.steps', input: { steps: 1 }, waitSeconds: -1 }],
    ['start_job waitSeconds above the max', 'start_job', { type: 'demo.steps', input: { steps: 1 }, waitSeconds: 1e9 }],
    ['start_job deadlineSeconds is fractional', 'start_job', { type: 'demo.steps', input: { steps: 1 }, deadlineSeconds: 1.5 }],
    ['start_job onDeadline unknown', 'start_job', { type: 'demo.steps', input: { steps: 1 }, onDeadline: 'explode' }],
    ['get_job_status jobId is a number', 'get_job_status', { jobId: 123 }],
    ['get_job_status jobId is null', 'get_job_status', { jobId: null }],
    ['get_job_status jobId is an array', 'get_job_status', { jobId: [UNKNOWN] }],
    ['get_job_status jobId is an object', 'get_job_status', { jobId: { id: UNKNOWN } }],
    ['get_job_status jobId malformed', 'get_job_status', { jobId: 'job_123' }],
    ['get_job_status missing jobId', 'get_job_status', {}],
    ['get_job_status includeSteps is a string', 'get_job_status', { jobId: UNKNOWN, includeSteps: 'yes' }],
    ['get_job_status waitSeconds is a string', 'get_job_status', { jobId: UNKNOWN, waitSeconds: '5' }],
    ['get_job_status waitSeconds above the max', 'get_job_status', { jobId: UNKNOWN, waitSeconds: 26 }],
    ['cancel_job jobId is a number', 'cancel_job', { jobId: 1 }],
    ['cancel_job missing jobId', 'cancel_job', { reason: 'x' }],
    ['cancel_job reason is a number', 'cancel_job', { jobId: UNKNOWN, reason: 5 }],
    ['cancel_job reason is null', 'cancel_job', { jobId: UNKNOWN, reason: null }],
    ['list_jobs status unknown', 'list_jobs', { status: 'exploded' }],
    ['list_jobs status is a number', 'list_jobs', { status: 5 }],
    ['list_jobs type is a number', 'list_jobs', { type: 7 }],
    ['list_jobs limit 0', 'list_jobs', { limit: 0 }],
    ['list_jobs limit above the max page', 'list_jobs', { limit: 101 }],
    ['list_jobs limit is a string', 'list_jobs', { limit: '10' }],
    ['list_jobs limit is fractional', 'list_jobs', { limit: 1.5 }],
    ['list_jobs cursor is a number', 'list_jobs', { cursor: 123 }],
    ['list_jobs cursor is not a job id', 'list_jobs', { cursor: 'page-2' }],
    ['respond_to_job decision unknown', 'respond_to_job', { jobId: UNKNOWN, decision: 'yes' }],
    ['respond_to_job decision is a number', 'respond_to_job', { jobId: UNKNOWN, decision: 1 }],
    ['respond_to_job missing decision', 'respond_to_job', { jobId: UNKNOWN }],
    ['respond_to_job note is a number', 'respond_to_job', { jobId: UNKNOWN, decision: 'approve', note: 5 }],
    ['respond_to_job jobId is null', 'respond_to_job', { jobId: null, decision: 'approve' }],
    ['retry_job jobId is an array', 'retry_job', { jobId: [] }],
    ['retry_job note is an object', 'retry_job', { jobId: UNKNOWN, note: { text: 'x' } }],
    ['get_job_history jobId is false', 'get_job_history', { jobId: false }],
    ['get_job_history limit 0', 'get_job_history', { jobId: UNKNOWN, limit: 0 }],
    ['get_job_history limit above the max page', 'get_job_history', { jobId: UNKNOWN, limit: 201 }],
    ['get_job_history cursor is a number', 'get_job_history', { jobId: UNKNOWN, cursor: 123 }],
    ['get_job_history cursor has bad characters', 'get_job_history', { jobId: UNKNOWN, cursor: '!!!' }],
  ];
  it.each(cases)('%s', async (name, tool, args) => {
    await toolCase(G, name, tool, args);
  });

  it('covers every tool', () => {
    const covered = new Set(cases.map((c) => c[1]));
    for (const t of TOOLS.filter((t) => t !== 'list_job_types')) expect(covered).toContain(t);
  });

  // The input schemas strip unknown properties (they are not strict): an extra property is
  // ignored, never stored, on every tool.
  it.each<[string, Record<string, unknown>]>([
    ['list_job_types', { extra: true, $where: '1=1' }],
    ['list_jobs', { extra: { nested: [1, 2] }, tenantId: 'globex' }],
    ['get_job_status', { jobId: UNKNOWN, tenantId: 'local', extra: 1 }],
    ['cancel_job', { jobId: UNKNOWN, force: true }],
    ['respond_to_job', { jobId: UNKNOWN, decision: 'approve', by: 'admin' }],
    ['retry_job', { jobId: UNKNOWN, attempts: 99 }],
    ['get_job_history', { jobId: UNKNOWN, all: true }],
  ])('%s with extra unknown properties is ignored cleanly', async (tool, args) => {
    await toolCase(G, `${tool} extra unknown properties`, tool, args, { expect: ['success', 'not_found'] });
  });

  it('start_job with extra unknown properties ignores them and stores none of them', async () => {
    const r = await toolCase(G, 'start_job extra unknown properties', 'start_job', {
      type: 'demo.steps',
      input: { steps: 1, evil: 'x' },
      idempotencyKey: 'extra-props',
      tenantId: 'globex',
      principalId: 'root',
    }, { expect: ['success'], writes: true });
    const [row] = await stack.db.sql<{ tenant_id: string; input: Record<string, unknown> }[]>`select tenant_id, input from jobs where id = ${sc(r).jobId}`;
    expect(row!.tenant_id).toBe('local');
    expect(row!.input).not.toHaveProperty('evil');
  });
});

describe('huge inputs', () => {
  const G = 'huge';

  it('an input over STEPWISE_MAX_INPUT_BYTES is payload_too_large', async () => {
    await toolCase(G, 'input over max input bytes', 'start_job', { type: 'demo.steps', input: { steps: 1, pad: 'x'.repeat(MAX_INPUT_BYTES * 2) } }, { code: 'payload_too_large' });
  });

  it('a body over the HTTP body limit is 413 with a JSON-RPC error', async () => {
    const a = await protocolCase(G, 'body over http body limit', rawCall(1, 'start_job', { type: 'demo.steps', input: { steps: 1, pad: 'x'.repeat(BODY_LIMIT + 10) } }));
    expect(a.status).toBe(413);
  });

  it.each<[string, string, Record<string, unknown>]>([
    ['100k-char idempotencyKey', 'start_job', { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: 'k'.repeat(100_000) }],
    ['100k-char type', 'start_job', { type: 't'.repeat(100_000), input: { steps: 1 } }],
    ['100k-char cancel reason', 'cancel_job', { jobId: UNKNOWN, reason: 'r'.repeat(100_000) }],
    ['100k-char respond note', 'respond_to_job', { jobId: UNKNOWN, decision: 'approve', note: 'n'.repeat(100_000) }],
    ['100k-char retry note', 'retry_job', { jobId: UNKNOWN, note: 'n'.repeat(100_000) }],
    ['100k-char list_jobs type filter', 'list_jobs', { type: 't'.repeat(100_000) }],
    ['100k-char jobId', 'get_job_status', { jobId: `job_${'0'.repeat(100_000)}` }],
    ['100k-char history cursor', 'get_job_history', { jobId: UNKNOWN, cursor: 'c'.repeat(100_000) }],
  ])('%s is invalid_input', async (name, tool, args) => {
    await toolCase(G, name, tool, args);
  });

  it('a huge cancel reason on a live job changes nothing', async () => {
    const id = await pendingJob('huge-reason');
    await toolCase(G, '100k-char cancel reason on a live job', 'cancel_job', { jobId: id, reason: 'r'.repeat(100_000) });
    expect((await stack.db.sql`select status from jobs where id = ${id}`)[0]!.status).toBe('pending');
  });
});

describe('deeply nested inputs', () => {
  const G = 'deep';
  const nest = (depth: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = { a: v };
    return v;
  };
  const nestJson = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const nestArraysJson = (depth: number): string => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

  it.each<[string, unknown]>([
    ['input nested one level too deep', { steps: 1, deep: nest(MAX_INPUT_DEPTH) }],
    ['input nested 1000 objects deep', { steps: 1, deep: nest(1000) }],
  ])('%s is payload_too_deep', async (name, input) => {
    await toolCase(G, name, 'start_job', { type: 'demo.steps', input }, { code: 'payload_too_deep' });
  });

  it('input nested 5000 arrays deep is payload_too_deep', async () => {
    await rawToolCase(G, 'input nested 5000 arrays deep', 'start_job', `{"type":"demo.steps","input":${nestArraysJson(5000)}}`, ['invalid_input'], 'payload_too_deep');
  });

  it('a 5000-deep respond_to_job output is payload_too_deep, on an unknown job and on a waiting one', async () => {
    await rawToolCase(G, '5000-deep respond output (unknown job)', 'respond_to_job', `{"jobId":"${UNKNOWN}","decision":"mark_done","output":${nestJson(5000)}}`, ['invalid_input'], 'payload_too_deep');
    const id = await pendingJob('deep-output');
    await forceState(id, 'waiting');
    await rawToolCase(G, '5000-deep respond output (waiting job)', 'respond_to_job', `{"jobId":"${id}","decision":"mark_done","output":${nestJson(5000)}}`, ['invalid_input'], 'payload_too_deep');
    expect((await stack.db.sql`select status from jobs where id = ${id}`)[0]!.status).toBe('waiting');
  });

  it('a 5000-deep extra argument on a read tool is a clean answer', async () => {
    await rawToolCase(G, '5000-deep extra argument', 'list_jobs', `{"extra":${nestJson(5000)}}`, ['success', 'invalid_input']);
  });

  it('a 5000-deep unknown property on start_job (stripped) is a clean answer, and audited', async () => {
    await rawToolCase(G, '5000-deep stripped property', 'start_job', `{"type":"no.such.type","input":{},"extra":${nestJson(5000)}}`, ['invalid_input']);
  });

  it('a body nested 100000 levels (parser stress) is a 4xx, not a crash', async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"start_job","arguments":{"type":"demo.steps","input":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`;
    const a = await unchanged(() => post(body));
    expect(a.status).toBeLessThan(500);
    const m = a.messages[0]!;
    if (a.status === 200) {
      expect((m.result as CallToolResult).isError).toBe(true);
      expect(sc(m.result as CallToolResult).code).toBe('payload_too_deep');
    } else {
      expect(m.error).toBeDefined();
    }
    outcomes.push({ group: G, case: 'body nested 100000 levels', http: a.status, ...(a.status === 200 ? { tool: sc(m.result as CallToolResult).code as string } : { rpcError: (m.error as { code: number }).code }) });
    // The server is still alive.
    expect((await post(rawCall(2, 'list_jobs', {}))).status).toBe(200);
  });
});

describe('unicode edge cases in every string field', () => {
  const G = 'unicode';
  const STRINGS: [string, string][] = [
    ['lone high surrogate', 'a\ud800b'],
    ['lone low surrogate', 'a\udc00b'],
    ['RTL override', 'abc\u202edcba'],
    ['zero-width joiners', '👩\u200d👩\u200d👧\u200d👦\u200b\u200c\ufeff'],
    ['emoji', '🚀🔥💥'],
    ['NUL', 'a\u0000b'],
    ['very long unicode', '𝔘'.repeat(5000)],
  ];

  // A clear answer: invalid_input, or a clean success (odd but storable), or not_found for ids.
  const clear = ['invalid_input', 'not_found', 'success'];

  describe.each(STRINGS)('%s', (label, s) => {
    it('start_job idempotencyKey', async () => {
      const r = await toolCase(G, `${label} in start_job idempotencyKey`, 'start_job', { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: `${label}:${s}` }, { expect: clear, writes: true });
      if (!r.isError) {
        // Stored as sent, and the same call finds the same job again.
        const again = (await acme.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: `${label}:${s}` } })) as CallToolResult;
        expect(sc(again)).toMatchObject({ jobId: sc(r).jobId, deduplicated: true });
      }
    });

    it('start_job type', async () => {
      await toolCase(G, `${label} in start_job type`, 'start_job', { type: `demo.steps${s}`, input: { steps: 1 } });
    });

    it('start_job input string', async () => {
      await toolCase(G, `${label} in start_job input`, 'start_job', { type: 'demo.steps', input: { steps: 1, effectUrl: `http://127.0.0.1:9/${s}` } }, { expect: clear, writes: true });
    });

    it('start_job input key', async () => {
      await toolCase(G, `${label} in start_job input key`, 'start_job', { type: 'demo.steps', input: { steps: 1, [`k${s}`]: s }, idempotencyKey: `key-${label}` }, { expect: clear, writes: true });
    });

    it('cancel_job reason on a live job', async () => {
      const id = await pendingJob(`cancel-${label}`);
      await toolCase(G, `${label} in cancel_job reason`, 'cancel_job', { jobId: id, reason: `stop ${s}`.slice(0, 500) }, { expect: clear, writes: true });
    });

    it('retry_job note on a failed job', async () => {
      const id = await pendingJob(`retry-${label}`);
      await forceState(id, 'failed');
      await toolCase(G, `${label} in retry_job note`, 'retry_job', { jobId: id, note: `fixed ${s}`.slice(0, 1000) }, { expect: clear, writes: true });
    });

    it('respond_to_job note on a waiting job', async () => {
      const id = await pendingJob(`respond-${label}`);
      await forceState(id, 'waiting');
      await toolCase(G, `${label} in respond_to_job note`, 'respond_to_job', { jobId: id, decision: 'reject', note: `no ${s}`.slice(0, 1000) }, { expect: clear, writes: true });
    });

    it('list_jobs type filter', async () => {
      const r = await toolCase(G, `${label} in list_jobs type`, 'list_jobs', { type: `demo${s}`.slice(0, 128) }, { expect: clear });
      if (!r.isError) expect(sc(r).jobs).toEqual([]);
    });

    it('every jobId and cursor', async () => {
      for (const tool of JOB_ID_TOOLS) {
        await toolCase(G, `${label} in ${tool} jobId`, tool, { jobId: `job_${s}`, decision: 'approve' });
      }
      await toolCase(G, `${label} in list_jobs cursor`, 'list_jobs', { cursor: `job_${s}` });
      await toolCase(G, `${label} in get_job_history cursor`, 'get_job_history', { jobId: jobA, cursor: s });
    });
  });
});

describe('SQL metacharacters in every filter and id field', () => {
  const G = 'sql';
  const META: [string, string][] = [
    ['quote OR 1=1', "' OR 1=1 --"],
    ['percent', '%'],
    ['underscore', '_'],
    ['backslash', '\\'],
    ['drop table', ';drop table jobs;'],
  ];

  describe.each(META)('%s', (label, s) => {
    it('list_jobs type matches nothing (no wildcard, no injection)', async () => {
      const r = await toolCase(G, `${label} in list_jobs type`, 'list_jobs', { type: s }, { expect: ['success', 'invalid_input'] });
      if (!r.isError) expect(sc(r).jobs).toEqual([]);
    });

    it('list_jobs status and cursor are refused', async () => {
      await toolCase(G, `${label} in list_jobs status`, 'list_jobs', { status: s });
      await toolCase(G, `${label} in list_jobs cursor`, 'list_jobs', { cursor: s });
      await toolCase(G, `${label} in list_jobs cursor after job_`, 'list_jobs', { cursor: `job_${s}` });
    });

    it('every jobId is refused', async () => {
      for (const tool of JOB_ID_TOOLS) {
        await toolCase(G, `${label} in ${tool} jobId`, tool, { jobId: s, decision: 'approve' });
      }
    });

    it('get_job_history cursor is refused', async () => {
      await toolCase(G, `${label} in get_job_history cursor`, 'get_job_history', { jobId: jobA, cursor: s });
    });

    it('start_job type and idempotencyKey', async () => {
      await toolCase(G, `${label} in start_job type`, 'start_job', { type: s, input: { steps: 1 } }, { expect: ['invalid_input'] });
      const r = await toolCase(G, `${label} in start_job idempotencyKey`, 'start_job', { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: s }, { expect: ['success', 'invalid_input'], writes: true });
      if (!r.isError) {
        const [row] = await stack.db.sql<{ idempotency_key: string }[]>`select idempotency_key from jobs where id = ${sc(r).jobId}`;
        expect(row!.idempotency_key).toBe(s);
      }
    });
  });

  it('the jobs table is intact and still lists acme\'s jobs', async () => {
    const r = (await acme.callTool({ name: 'list_jobs', arguments: { limit: 100 } })) as CallToolResult;
    expect((sc(r).jobs as { jobId: string }[]).map((j) => j.jobId)).toContain(jobA);
  });
});

describe('credentials', () => {
  const G = 'auth';
  const list = rawCall(1, 'list_jobs', {});

  it.each<[string, () => Promise<string | null>]>([
    ['no token', async () => null],
    ['empty bearer', async () => ''],
    ['forged sw_ token', async () => `sw_${'0123456789ab'}_${'A'.repeat(32)}`],
    ['valid prefix, wrong secret', async () => {
      const { token } = await mintApiKey(stack.db, { name: 'wrong-secret' });
      return `${token.slice(0, -6)}ZZZZZZ`;
    }],
    ['expired key', async () => (await mintApiKey(stack.db, { name: 'expired', expiresAt: new Date(Date.now() - 1000) })).token],
    ['revoked key', async () => {
      const made = await mintApiKey(stack.db, { name: 'revoked' });
      await revokeApiKey(stack.db.db, { idOrPrefix: made.key.id });
      return made.token;
    }],
    ['JWT-looking garbage', async () => 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhZG1pbiIsInRlbmFudCI6ImxvY2FsIn0.c2lnbmF0dXJl'],
    ['alg none JWT', async () => 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiIsInRlbmFudCI6ImxvY2FsIn0.'],
    ['SQL in the token', async () => "sw_' OR 1=1 --"],
    ['10k-char token', async () => `sw_${'a'.repeat(10_000)}`],
    ['another tenant key with a flipped character', async () => {
      const { token } = await mintApiKey(stack.db, { tenant: 'globex', name: 'flipped' });
      return token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a');
    }],
  ])('%s: 401 with a challenge and a JSON-RPC error', async (name, token) => {
    const t = await token(); // minting happens before the measured request
    const a = await protocolCase(G, name, list, { token: t });
    expect(a.status).toBe(401);
    expect(a.raw).not.toContain(stack.apiKey);
  });

  it('Basic auth scheme: 401', async () => {
    const a = await protocolCase(G, 'basic scheme', list, { token: null, headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } });
    expect(a.status).toBe(401);
  });

  it('a valid key of another tenant sees the first tenant\'s job as not_found on every tool', async () => {
    for (const tool of JOB_ID_TOOLS) {
      await toolCase(G, `other tenant ${tool} on acme's job`, tool, { jobId: jobA, decision: 'approve' }, { client: globex, expect: ['not_found'], code: 'job_not_found' });
    }
    const r = await toolCase(G, 'other tenant list_jobs cursor at acme\'s job', 'list_jobs', { cursor: jobA }, { client: globex, expect: ['success', 'not_found', 'invalid_input'] });
    if (!r.isError) expect((sc(r).jobs as { jobId: string }[]).map((j) => j.jobId)).not.toContain(jobA);
    expect((await stack.db.sql`select status from jobs where id = ${jobA}`)[0]!.status).toBe('pending');
  });
});

describe('the record', () => {
  it('every refused tool call left an audit row with outcome error or denied', async () => {
    await new Promise((r) => setTimeout(r, 800)); // the error/read audit buffer flushes every 250 ms
    expect(toolErrorRequestIds.length).toBeGreaterThan(0);
    const rows = await stack.db.sql<{ request_id: string; outcome: string }[]>`
      select request_id, outcome from audit_events where request_id in ${stack.db.sql(toolErrorRequestIds)}`;
    const byId = new Map(rows.map((r) => [r.request_id, r.outcome]));
    for (const id of toolErrorRequestIds) expect(['error', 'denied'], id).toContain(byId.get(id));
  });

  it('the server never answered 500 nor logged an unexpected error', () => {
    expect(outcomes.every((o) => o.http < 500)).toBe(true);
    const errors = stack.server!.lines.filter((l) => Number(l.level) >= 50);
    expect(errors.map((l) => l.msg)).toEqual([]);
  });

  it('tried at least 40 cases', () => {
    expect(outcomes.length).toBeGreaterThanOrEqual(40);
  });
});
