import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '@stepwise/testing';
import { sc, startStack } from '@stepwise/testing';

// Issue #6 end to end: the real MCP server and real workers run mcp.chain jobs against real,
// third-party MCP servers from npm (server-filesystem, server-everything) and our own small
// fixtures (a tool whose schema changes, an HTTP server that checks a bearer token), while
// workers are SIGKILLed, downstream servers die, schemas change and tokens expire. Every stdio
// server sits behind a recording proxy (fixtures/stdio-tee.mjs), so the tests count exactly what
// each downstream server received.

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const require = createRequire(import.meta.url);
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const MEMORY = require.resolve('@modelcontextprotocol/server-memory/dist/index.js');
const node = process.execPath;
const LEASE_MS = 1500;

interface Sent {
  id?: number;
  method?: string;
  params?: { name?: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown>; requestId?: number };
}

describe('mcp.chain against real MCP servers', () => {
  let stack: Stack;
  let dir: string;
  let root: string; // the directory server-filesystem may touch
  let auth: ChildProcess;
  const paths = (name: string) => ({ log: join(dir, `${name}.log`), pids: join(dir, `${name}.pids`) });
  const tee = (name: string, ...command: string[]) => ({
    command: node,
    args: [join(FIXTURES, 'stdio-tee.mjs'), paths(name).log, paths(name).pids, '--', ...command],
  });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stepwise-chain-e2e-'));
    root = join(dir, 'root');
    await mkdir(join(root, 'in'), { recursive: true });
    await writeFile(join(root, 'in', 'a.txt'), 'Alpha requirements: the parser must accept UTF-8.');
    await writeFile(join(root, 'in', 'b.txt'), 'Beta requirements: errors carry a category.');
    await writeFile(join(dir, 'schema.json'), JSON.stringify(schemaSpec(1)));
    await writeFile(join(dir, 'expected-token'), 'token-1');
    await writeFile(join(dir, 'token'), 'token-1\n');

    auth = spawn(node, [join(FIXTURES, 'auth-http-server.mjs')], {
      env: { ...process.env, TOKEN_FILE: join(dir, 'expected-token'), CALL_LOG: join(dir, 'auth-calls.log') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const ready = await new Promise<string>((resolve) => createInterface({ input: auth.stdout! }).once('line', resolve));
    const authUrl = (JSON.parse(ready) as { url: string }).url;

    const servers = {
      // Destructive writes need approval by default; these tests are about recovery, so this
      // server opts out. `fs-guarded` keeps the default and is where approval is tested.
      fs: { stdio: tee('fs', node, FILESYSTEM, root), approval: 'never' },
      'fs-guarded': { stdio: tee('fs-guarded', node, FILESYSTEM, root) },
      everything: { stdio: tee('everything', node, EVERYTHING, 'stdio') },
      memory: { stdio: { ...tee('memory', node, MEMORY), env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } } },
      versioned: {
        stdio: { command: node, args: [join(FIXTURES, 'versioned-server.mjs')], env: { SCHEMA_FILE: join(dir, 'schema.json'), RECORD_LOG: join(dir, 'record.log') } },
        approval: 'never',
      },
      secure: { http: { url: authUrl }, auth: { bearerTokenFile: join(dir, 'token') } },
    };
    stack = await startStack('stdio', {
      workers: 0,
      env: { STEPWISE_LEASE_MS: String(LEASE_MS), STEPWISE_SWEEP_INTERVAL_MS: '500', STEPWISE_MCP_SERVERS: JSON.stringify({ servers }) },
    });
  });
  afterEach(async () => {
    await Promise.all(stack.workers.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await stack?.close();
    auth?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  function schemaSpec(version: number, over: Record<string, unknown> = {}) {
    return {
      version,
      present: true,
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
      ...over,
    };
  }

  async function sent(name: string): Promise<Sent[]> {
    const text = await readFile(paths(name).log, 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Sent);
  }
  const toolCalls = async (name: string, tool: string) => (await sent(name)).filter((m) => m.method === 'tools/call' && m.params?.name === tool);

  async function start(input: Record<string, unknown>): Promise<string> {
    const r = await stack.call('start_job', { type: 'mcp.chain', input, idempotencyKey: `chain-${Math.random()}` });
    expect(r.isError, JSON.stringify(r.structuredContent)).toBeFalsy();
    return sc(r).jobId as string;
  }

  /** Until the job ends or needs a person (a waiting job with a decision recorded is resuming). */
  async function settle(jobId: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 6; i++) {
      const s = sc(await stack.call('get_job_status', { jobId, waitSeconds: 20, includeSteps: true }));
      if (['succeeded', 'failed', 'cancelled'].includes(s.status as string)) return s;
      if (s.status === 'waiting' && !s.resuming) return s;
    }
    throw new Error(`job ${jobId} did not settle`);
  }

  const stepOf = (s: Record<string, unknown>, name: string) => (s.steps as { name: string; attempt: number; output?: Record<string, unknown> }[]).find((x) => x.name === name)!;

  /** Read two files, write a report made of them, copy it, read it back. */
  const reportChain = (out: string) => ({
    steps: [
      { id: 'list', server: 'fs', tool: 'list_directory', arguments: { path: join(root, 'in') } },
      { id: 'read-a', server: 'fs', tool: 'read_text_file', arguments: { path: join(root, 'in', 'a.txt') } },
      { id: 'read-b', server: 'fs', tool: 'read_text_file', arguments: { path: join(root, 'in', 'b.txt') } },
      { id: 'mkdir', server: 'fs', tool: 'create_directory', arguments: { path: join(root, out) } },
      {
        id: 'write-report',
        server: 'fs',
        tool: 'write_file',
        arguments: {
          path: join(root, out, 'report.md'),
          content: '# Requirements\n\n{{steps.read-a.structuredContent.content}}\n{{steps.read-b.structuredContent.content}}\n\nSources:\n{{steps.list.content[0].text}}\n',
        },
      },
      { id: 'write-copy', server: 'fs', tool: 'write_file', arguments: { path: join(root, out, 'copy.md'), content: '{{steps.write-report.structuredContent.content}}' } },
      { id: 'verify', server: 'fs', tool: 'read_text_file', arguments: { path: join(root, out, 'report.md') } },
    ],
  });
  const expectedReport = expect.stringMatching(
    /^# Requirements\n\nAlpha requirements: the parser must accept UTF-8\.\nBeta requirements: errors carry a category\.\n\nSources:\n(\[FILE\] a\.txt\n\[FILE\] b\.txt|\[FILE\] b\.txt\n\[FILE\] a\.txt)\n$/,
  );

  it('(a) a read-transform-write chain survives a worker SIGKILL after its last call; each write happened once', async () => {
    const crashed = await stack.startWorker({ STEPWISE_TEST_CRASH_AT: 'after-call:verify' });
    const jobId = await start(reportChain('out-a'));
    expect((await crashed.exited).signal).toBe('SIGKILL');
    await stack.startWorker();
    const s = await settle(jobId);
    expect(s.status).toBe('succeeded');

    expect(await readFile(join(root, 'out-a', 'report.md'), 'utf8')).toEqual(expectedReport);
    expect(await readFile(join(root, 'out-a', 'copy.md'), 'utf8')).toBe(`Successfully wrote to ${join(root, 'out-a', 'report.md')}`);
    const writes = await toolCalls('fs', 'write_file');
    const mine = writes.filter((m) => String(m.params?.arguments?.path).includes('out-a'));
    expect(mine.map((m) => m.params?.arguments?.path)).toEqual([join(root, 'out-a', 'report.md'), join(root, 'out-a', 'copy.md')]);
    expect(mine.map((m) => m.params?._meta?.idempotencyKey)).toEqual([`${jobId}:write-report:1`, `${jobId}:write-copy:1`]);
    // The read-only step that was interrupted ran again; nothing checkpointed did.
    const verifies = (await toolCalls('fs', 'read_text_file')).filter((m) => String(m.params?.arguments?.path).includes('out-a'));
    expect(verifies).toHaveLength(2);

    const report = stepOf(s, 'write-report').output!;
    expect(report).toMatchObject({ server: 'fs', tool: 'write_file', effect: 'idempotent', idempotencyKey: `${jobId}:write-report:1`, schemaChanged: false });
    expect(report.requestId).toBe(mine[0]?.id);
    expect((s.result as { steps: { id: string; result: { structuredContent: { content: string } } }[] }).steps.at(-1)?.result.structuredContent.content).toEqual(expectedReport);
  });

  it('(a) a SIGKILL right after an idempotent write replays it with the same idempotency key, and the content is unchanged', async () => {
    const crashed = await stack.startWorker({ STEPWISE_TEST_CRASH_AT: 'after-call:write-report' });
    const jobId = await start(reportChain('out-b'));
    expect((await crashed.exited).signal).toBe('SIGKILL');
    await stack.startWorker();
    expect((await settle(jobId)).status).toBe('succeeded');

    const mine = (await toolCalls('fs', 'write_file')).filter((m) => String(m.params?.arguments?.path).includes('out-b'));
    const report = mine.filter((m) => String(m.params?.arguments?.path).endsWith('report.md'));
    expect(report).toHaveLength(2); // interrupted between the call and its checkpoint: replayed…
    expect(new Set(report.map((m) => m.params?._meta?.idempotencyKey))).toEqual(new Set([`${jobId}:write-report:1`])); // …with the same key
    expect(report[0]?.params?.arguments).toEqual(report[1]?.params?.arguments); // the same write, so the effect is the same
    expect(mine.filter((m) => String(m.params?.arguments?.path).endsWith('copy.md'))).toHaveLength(1);
    expect(await readFile(join(root, 'out-b', 'report.md'), 'utf8')).toEqual(expectedReport);
  });

  it('(b) the downstream server is killed mid-call: the job reconnects to a restarted server and completes', async () => {
    await stack.startWorker();
    const before = (await toolCalls('everything', 'trigger-long-running-operation')).length;
    const jobId = await start({
      steps: [
        { id: 'long', server: 'everything', tool: 'trigger-long-running-operation', arguments: { duration: 2, steps: 2 } },
        { id: 'after', server: 'fs', tool: 'list_directory', arguments: { path: join(root, 'in') } },
      ],
    });
    await expect.poll(async () => (await toolCalls('everything', 'trigger-long-running-operation')).length, { timeout: 15_000 }).toBe(before + 1);
    // Kill every server-everything process (the worker's, and the MCP server's planning one).
    const pids = (await readFile(paths('everything').pids, 'utf8')).trim().split('\n');
    for (const line of pids) {
      try {
        process.kill((JSON.parse(line) as { server: number }).server, 'SIGKILL');
      } catch {
        // already gone
      }
    }

    const s = await settle(jobId);
    expect(s.status).toBe('succeeded');
    expect(stepOf(s, 'long').attempt).toBe(2); // the first attempt died with its server
    expect((await toolCalls('everything', 'trigger-long-running-operation')).length).toBe(before + 2);
    expect((await readFile(paths('everything').pids, 'utf8')).trim().split('\n').length).toBeGreaterThan(pids.length); // spawned again
  });

  it('(c) a tool whose schema changed waits with schema_changed (then tool_unavailable), and resumes after a fix', async () => {
    const jobId = await start({ steps: [{ id: 'rec', server: 'versioned', tool: 'record', arguments: { text: 'hello' } }] });
    // Between planning and the run the server renames the required argument.
    await writeFile(join(dir, 'schema.json'), JSON.stringify(schemaSpec(2, { inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } })));
    await stack.startWorker();
    let s = await settle(jobId);
    expect(s).toMatchObject({ status: 'waiting', waitingReason: 'schema_changed', currentStep: 'rec' });
    expect(s.waitingDetails).toMatchObject({ step: 'rec', server: 'versioned', tool: 'record', diff: expect.arrayContaining(['- properties.text', '+ properties.message: {"type":"string"}']) });
    expect(await readFile(join(dir, 'record.log'), 'utf8').catch(() => '')).toBe('');

    // The tool disappears altogether; retry re-checks and waits for the new reason.
    await writeFile(join(dir, 'schema.json'), JSON.stringify(schemaSpec(3, { present: false })));
    expect(sc(await stack.call('respond_to_job', { jobId, decision: 'retry', note: 'server redeployed' })).decision).toBe('retry');
    s = await settle(jobId);
    expect(s).toMatchObject({ status: 'waiting', waitingReason: 'tool_unavailable' });

    // Back with a compatible schema (an extra optional field): the step runs, noting the change.
    await writeFile(join(dir, 'schema.json'), JSON.stringify(schemaSpec(4, { inputSchema: { type: 'object', properties: { text: { type: 'string' }, tag: { type: 'string' } }, required: ['text'] } })));
    await stack.call('respond_to_job', { jobId, decision: 'retry' });
    s = await settle(jobId);
    expect(s.status).toBe('succeeded');
    expect(stepOf(s, 'rec').output).toMatchObject({ schemaChanged: true, result: { structuredContent: { version: 4, args: { text: 'hello' } } } });
    expect((await readFile(join(dir, 'record.log'), 'utf8')).trim().split('\n')).toHaveLength(1);
  });

  it('(d) an expired token on an HTTP downstream waits for re-authorization and resumes after the fix', async () => {
    const jobId = await start({ steps: [{ id: 'note', server: 'secure', tool: 'note', arguments: { text: 'deploy approved' } }] });
    await writeFile(join(dir, 'expected-token'), 'token-2'); // the server rotates: token-1 is now expired
    await stack.startWorker();
    let s = await settle(jobId);
    expect(s).toMatchObject({ status: 'waiting', waitingReason: 'needs_reauthorization', error: { category: 'unauthorized' } });

    await writeFile(join(dir, 'token'), 'token-2\n'); // an operator refreshes the credential file
    await stack.call('respond_to_job', { jobId, decision: 'retry', note: 'token rotated' });
    s = await settle(jobId);
    expect(s.status).toBe('succeeded');
    expect(stepOf(s, 'note').output).toMatchObject({ server: 'secure', result: { structuredContent: { noted: 'deploy approved' } } });
    const calls = (await readFile(join(dir, 'auth-calls.log'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { text: string; key: string });
    expect(calls).toEqual([{ text: 'deploy approved', key: `${jobId}:note:1` }]);
    // The credential never reached the job's rows.
    const [row] = await stack.db.sql<{ input: unknown }[]>`select input from jobs where id = ${jobId}`;
    expect(JSON.stringify(row?.input)).not.toContain('token-2');
  });

  it('(e) cancelling a long downstream call sends notifications/cancelled for that request and cancels the job', async () => {
    await stack.startWorker();
    const before = (await toolCalls('everything', 'trigger-long-running-operation')).length;
    const jobId = await start({ steps: [{ id: 'long', server: 'everything', tool: 'trigger-long-running-operation', arguments: { duration: 60, steps: 60 } }] });
    await expect.poll(async () => (await toolCalls('everything', 'trigger-long-running-operation')).length, { timeout: 15_000 }).toBe(before + 1);
    const call = (await toolCalls('everything', 'trigger-long-running-operation')).at(-1)!;

    expect((await stack.call('cancel_job', { jobId, reason: 'not needed any more' })).isError).toBeFalsy();
    const s = await settle(jobId);
    expect(s.status).toBe('cancelled');
    await expect
      .poll(async () => (await sent('everything')).filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.requestId), { timeout: 5000 })
      .toContain(call.id);
  });

  it('an unsafe call (server-memory create_entities) interrupted by a SIGKILL is never replayed: a person confirms it', async () => {
    const crashed = await stack.startWorker({ STEPWISE_TEST_CRASH_AT: 'after-call:create' });
    const entity = { name: 'parser', entityType: 'component', observations: ['accepts UTF-8'] };
    const jobId = await start({
      steps: [
        { id: 'create', server: 'memory', tool: 'create_entities', arguments: { entities: [entity] } },
        { id: 'graph', server: 'memory', tool: 'read_graph', arguments: {} },
        {
          id: 'observe',
          server: 'memory',
          tool: 'add_observations',
          arguments: { observations: [{ entityName: '{{steps.graph.structuredContent.entities[0].name}}', contents: ['checked after {{steps.create.content[0].type}} result'] }] },
        },
      ],
    });
    expect((await crashed.exited).signal).toBe('SIGKILL');
    await stack.startWorker();
    let s = await settle(jobId);
    expect(s).toMatchObject({ status: 'waiting', waitingReason: 'needs_confirmation', currentStep: 'create' });
    expect(stepOf(s, 'create').output).toBeUndefined();
    expect(await toolCalls('memory', 'create_entities')).toHaveLength(1);

    // The assistant checks the graph itself, sees the entity, and records the call as done.
    const output = { content: [{ type: 'text', text: JSON.stringify([entity]) }], structuredContent: { entities: [entity] } };
    await stack.call('respond_to_job', { jobId, decision: 'mark_done', output, note: 'the entity is in the graph' });
    s = await settle(jobId);
    expect(s.status).toBe('succeeded');
    expect(await toolCalls('memory', 'create_entities')).toHaveLength(1);
    expect((await toolCalls('memory', 'add_observations'))[0]?.params?.arguments).toEqual({
      observations: [{ entityName: 'parser', contents: ['checked after text result'] }],
    });
    const graph = stepOf(s, 'graph').output as { effect: string; result: { structuredContent: { entities: unknown[] } } };
    expect(graph.effect).toBe('none');
    expect(graph.result.structuredContent.entities).toEqual([entity]);
  });

  it('a destructive tool waits for approval, showing the call; once approved it runs once', async () => {
    await stack.startWorker();
    const target = join(root, 'approved.txt');
    const jobId = await start({ steps: [{ id: 'write', server: 'fs-guarded', tool: 'write_file', arguments: { path: target, content: 'approved content' } }] });
    let s = await settle(jobId);
    expect(s).toMatchObject({ status: 'waiting', waitingReason: 'needs_approval' });
    expect(s.waitingDetails).toMatchObject({ action: 'call write_file on MCP server "fs-guarded"', parameters: { arguments: { path: target } } });
    expect(await toolCalls('fs-guarded', 'write_file')).toHaveLength(0);

    await stack.call('respond_to_job', { jobId, decision: 'approve', note: 'looks right' });
    s = await settle(jobId);
    expect(s.status).toBe('succeeded');
    expect(await readFile(target, 'utf8')).toBe('approved content');
    expect(await toolCalls('fs-guarded', 'write_file')).toHaveLength(1);
  });

  it('start_job refuses a chain naming an unknown tool or a later step, and writes nothing', async () => {
    const before = await stack.counts();
    const r = await stack.call('start_job', {
      type: 'mcp.chain',
      input: {
        steps: [
          { id: 'a', server: 'fs', tool: 'read_text_file', arguments: { path: '{{steps.b.content}}' } },
          { id: 'b', server: 'fs', tool: 'read_the_mind' },
        ],
      },
    });
    expect(r.isError).toBe(true);
    expect(sc(r)).toMatchObject({ code: 'invalid_input', category: 'invalid_input' });
    expect(JSON.stringify(sc(r).details)).toContain('steps.0.arguments.path');
    const r2 = await stack.call('start_job', { type: 'mcp.chain', input: { steps: [{ id: 'b', server: 'fs', tool: 'read_the_mind' }] } });
    expect(JSON.stringify(sc(r2).details)).toContain('has no tool \\"read_the_mind\\"');
    expect(await stack.counts()).toMatchObject({ jobs: before.jobs });
  });
});
