import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobType, ValidateContext } from '@stepwise/shared';
import { createLogger, enrichInput, FsBlobStore, InvalidInputError, JobRegistry, StepwiseError, unsafeCast, WaitRequestedError } from '@stepwise/shared';
import { DownstreamRegistry } from './downstream-registry.js';
import { DownstreamConfigSchema } from './downstream-config.js';
import { createMcpChainJob } from './mcp-chain.js';
import { McpChainInputSchema } from './chain-schemas.js';
import type { McpCallOutput, McpChainInput } from './chain-schemas.js';
import { callStep, chainStep, INLINE_RESULT_LIMIT, resultOf } from './call-step.js';
import type { CallStepContext } from './call-step.js';

// The job type against real servers (server-filesystem and our fixtures over stdio), without
// Postgres or Redis: plan validation, enrichment from annotations, and single steps run directly.

const FIXTURES = fileURLToPath(new URL('../test/fixtures/', import.meta.url));
const require = createRequire(import.meta.url);
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const node = process.execPath;

let dir: string;
let files: string;
let schemaFile: string;
let recordLog: string;
let registry: DownstreamRegistry;
let chain: JobType;
let jobs: JobRegistry;
const planning: ValidateContext = { tenantId: unsafeCast.tenantId('t1'), signal: AbortSignal.timeout(30_000) };

const V1 = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
const setSchema = (spec: Record<string, unknown>) => writeFile(schemaFile, JSON.stringify({ version: 1, present: true, inputSchema: V1, ...spec }));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepwise-chain-'));
  files = join(dir, 'files');
  await mkdir(files);
  await writeFile(join(files, 'a.txt'), 'alpha');
  await writeFile(join(files, 'big.txt'), 'x'.repeat(INLINE_RESULT_LIMIT + 100));
  schemaFile = join(dir, 'schema.json');
  recordLog = join(dir, 'record.log');
  await setSchema({});
  registry = new DownstreamRegistry(
    DownstreamConfigSchema.parse({
      servers: {
        fs: { stdio: { command: node, args: [FILESYSTEM, files] } },
        v: { stdio: { command: node, args: [join(FIXTURES, 'versioned-server.mjs')], env: { SCHEMA_FILE: schemaFile, RECORD_LOG: recordLog } } },
        raw: { stdio: { command: node, args: [join(FIXTURES, 'raw-server.mjs')] }, tools: { late: { effect: 'unsafe' } }, callTimeoutMs: 200 },
      },
    }),
    { listToolsTtlMs: 0 },
  );
  chain = createMcpChainJob(registry);
  jobs = new JobRegistry([chain]);
});
afterAll(async () => {
  await registry.close();
  await rm(dir, { recursive: true, force: true });
});

/** start_job's planning path: parse, validate, enrich. */
async function plan(input: unknown): Promise<McpChainInput> {
  const prepared = jobs.prepare('mcp.chain', input);
  await chain.validate?.(prepared.input, planning);
  return (await enrichInput(prepared, planning)).input as McpChainInput;
}

const errorOf = async (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

function ctx(outputs: Record<string, unknown> = {}, key = `job_x:s:1`): CallStepContext {
  return {
    jobId: unsafeCast.jobId('job_test'),
    attempt: 1,
    outputs,
    signal: new AbortController().signal,
    progress: () => undefined,
    idempotencyKey: key,
    log: createLogger({ name: 'test', level: 'silent' }),
    blobs: new FsBlobStore(join(dir, 'blobs')),
  };
}

describe('mcp.chain input', () => {
  it('rejects duplicate ids, forward and unknown references, and bad templates, with paths', () => {
    const r = McpChainInputSchema.safeParse({
      steps: [
        { id: 'a', server: 'fs', tool: 't', arguments: { x: '{{steps.b.content}}' } },
        { id: 'b', server: 'fs', tool: 't', dependsOn: ['a', 'zz'], arguments: { y: ['{{steps.nope.x}}', '{{steps.b.x}}', '{{steps.a..}}'] } },
        { id: 'a', server: 'fs', tool: 't' },
      ],
    });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`)).toEqual([
      'steps.0.arguments.x: {{steps.b.content}}: step "b" runs later; refer only to earlier steps',
      'steps.1.dependsOn.1: no step has id "zz"',
      'steps.1.arguments: bad template {{steps.a..}}: empty key after "."',
      'steps.2.id: duplicate step id "a"',
    ]);
  });
});

describe('mcp.chain planning (validate + enrich)', () => {
  it('reports unknown servers and tools, impossible result paths and bad arguments, all at once', async () => {
    const e = await errorOf(
      plan({
        steps: [
          { id: 'read', server: 'fs', tool: 'read_text_file', arguments: { path: join(files, 'a.txt') } },
          { id: 'nosrv', server: 'ghost', tool: 'x' },
          { id: 'notool', server: 'fs', tool: 'read_everything' },
          { id: 'badpath', server: 'fs', tool: 'write_file', arguments: { path: join(files, 'o.txt'), content: '{{steps.read.structuredContent.text}}' } },
          { id: 'badroot', server: 'fs', tool: 'write_file', arguments: { path: join(files, 'o.txt'), content: '{{steps.read.body}}' } },
          { id: 'badargs', server: 'fs', tool: 'write_file', arguments: { path: 42 } },
        ],
      }),
    );
    expect(e).toBeInstanceOf(InvalidInputError);
    const issues = (e as InvalidInputError).issues.map((i) => `${i.path}: ${i.message}`);
    expect(issues[0]).toBe('input.steps.1.server: no MCP server "ghost" is configured (configured: fs, raw, v)');
    expect(issues[1]).toMatch(/^input\.steps\.2\.tool: MCP server "fs" has no tool "read_everything" \(it has: .*read_text_file/);
    expect(issues[2]).toBe('input.steps.3.arguments.content: {{steps.read.structuredContent.text}}: read_text_file\'s output schema has no property "text" (it has: content)');
    expect(issues[3]).toMatch(/^input\.steps\.4\.arguments\.content: \{\{steps\.read\.body\}\}: a step result has content, structuredContent and isError/);
    expect(issues[4]).toMatch(/^input\.steps\.5\.arguments: do not match write_file's input schema/);
    expect(issues).toHaveLength(5);
  });

  it('records replay safety and approval from annotations, so the plan is a pure function of the stored input', async () => {
    const input = await plan({
      steps: [
        { id: 'read', server: 'fs', tool: 'read_text_file', arguments: { path: join(files, 'a.txt') } },
        { id: 'write', server: 'fs', tool: 'write_file', arguments: { path: join(files, 'b.txt'), content: '{{steps.read.structuredContent.content}}!' } },
        { id: 'mkdir', server: 'fs', tool: 'create_directory', arguments: { path: join(files, 'sub') } },
        { id: 'rec', server: 'v', tool: 'record', arguments: { text: 'hi' } },
      ],
    });
    expect(input.steps.map((s) => [s.id, s.planned?.effect, s.planned?.approval])).toEqual([
      ['read', 'none', 'none'],
      ['write', 'idempotent', 'required'], // destructive AND idempotent
      ['mkdir', 'idempotent', 'none'],
      ['rec', 'unsafe', 'required'], // no annotations: MCP's defaults
    ]);
    expect(input.steps[0]?.planned?.inputSchemaHash).toMatch(/^[0-9a-f]{64}$/);
    expect(chain.plan(input).map((s) => [s.name, s.effect, s.approval])).toEqual([
      ['read', 'none', 'none'],
      ['write', 'idempotent', 'required'],
      ['mkdir', 'idempotent', 'none'],
      ['rec', 'unsafe', 'required'],
    ]);
    // The stored input parses again on resume, and a caller cannot pre-fill `planned` to dodge approval.
    expect(chain.input.parse(input)).toEqual(input);
    const forged = structuredClone(input);
    for (const s of forged.steps) if (s.planned) s.planned.approval = 'none';
    expect((await plan(forged)).steps[1]?.planned?.approval).toBe('required');

    const skip = await plan({ approvals: 'skip_destructive', steps: [{ id: 'write', server: 'fs', tool: 'write_file', arguments: { path: join(files, 'c.txt'), content: 'c' } }] });
    expect(skip.steps[0]?.planned?.approval).toBe('none');
  });

  it('a step planned without start_job is unsafe and needs approval', () => {
    expect(chainStep(registry, { id: 's', server: 'fs', tool: 'write_file', arguments: {} })).toMatchObject({ effect: 'unsafe', approval: 'required' });
  });

  it('an unreachable server is a retryable error, not invalid input', async () => {
    const broken = new DownstreamRegistry(DownstreamConfigSchema.parse({ servers: { gone: { stdio: { command: join(dir, 'no-such-binary') } } } }));
    const e = await errorOf(createMcpChainJob(broken).validate!({ steps: [{ id: 'a', server: 'gone', tool: 'x', arguments: {} }], approvals: 'default' }, planning));
    expect(e).toMatchObject({ code: 'downstream_unavailable', category: 'transient', retryable: true });
    await broken.close();
  });
});

describe('mcp.chain steps', () => {
  it('resolves templates, passes the idempotency key in _meta, and checkpoints a redacted, digested record', async () => {
    const input = await plan({
      steps: [
        { id: 'read', server: 'fs', tool: 'read_text_file', arguments: { path: join(files, 'a.txt') } },
        { id: 'rec', server: 'v', tool: 'record', arguments: { text: 'got {{steps.read.structuredContent.content}}', apiKey: 'sekrit' } },
      ],
    });
    const [read, rec] = input.steps;
    const readOut = await callStep(registry, read!, ctx());
    expect(readOut).toMatchObject({ server: 'fs', tool: 'read_text_file', effect: 'none', schemaChanged: false, resultRef: null, result: { structuredContent: { content: 'alpha' } } });
    expect(typeof readOut.requestId).toBe('number');

    const recOut = await callStep(registry, rec!, ctx({ read: readOut }, 'job_x:rec:1'));
    expect(recOut.arguments).toEqual({ text: 'got alpha', apiKey: '[redacted]' });
    expect(recOut.argsDigest).toMatch(/^[0-9a-f]{64}$/);
    const logged = (await readFile(recordLog, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { args: unknown; meta: { idempotencyKey: string } });
    expect(logged.at(-1)).toMatchObject({ args: { text: 'got alpha', apiKey: 'sekrit' }, meta: { idempotencyKey: 'job_x:rec:1' } });
  });

  it('spills a large result to the blob store and still resolves templates from it', async () => {
    const input = await plan({ steps: [{ id: 'big', server: 'fs', tool: 'read_text_file', arguments: { path: join(files, 'big.txt') } }] });
    const out = await callStep(registry, input.steps[0]!, ctx());
    expect(out.result).toBeNull();
    expect(out.resultRef?.$blob.sha256).toBe(out.resultSha256);
    const loaded = (await resultOf(out, new FsBlobStore(join(dir, 'blobs')))) as { structuredContent: { content: string } };
    expect(loaded.structuredContent.content).toHaveLength(INLINE_RESULT_LIMIT + 100);
  });

  it('schema changed: continues when the arguments still fit, waits with schema_changed and a diff when not', async () => {
    await setSchema({});
    const input = await plan({ steps: [{ id: 'rec', server: 'v', tool: 'record', arguments: { text: 'hello' } }] });
    const step = input.steps[0]!;

    await setSchema({ version: 2, inputSchema: { ...V1, properties: { ...V1.properties, note: { type: 'string' } } } });
    const compatible = await callStep(registry, step, ctx());
    expect(compatible).toMatchObject({ schemaChanged: true, result: { structuredContent: { version: 2 } } });
    expect(compatible.inputSchemaHash).not.toBe(compatible.plannedInputSchemaHash);

    await setSchema({ version: 3, inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } });
    const e = await errorOf(callStep(registry, step, ctx()));
    expect(e).toBeInstanceOf(WaitRequestedError);
    expect(e).toMatchObject({ reason: 'schema_changed', category: 'invalid_input' });
    expect((e as WaitRequestedError).details).toMatchObject({ server: 'v', tool: 'record', diff: expect.arrayContaining(['+ properties.message: {"type":"string"}', '- properties.text']) });

    await setSchema({ present: false });
    expect(await errorOf(callStep(registry, step, ctx()))).toMatchObject({ reason: 'tool_unavailable', category: 'not_found' });
    await setSchema({});
  });

  it('an unsafe call that timed out after sending waits for confirmation; a read-only one is retried by category', async () => {
    const input = await plan({
      approvals: 'skip_destructive',
      steps: [
        { id: 'unsafe', server: 'raw', tool: 'late', arguments: { marker: 'u', delayMs: 1000 } },
        { id: 'safe', server: 'raw', tool: 'twice', arguments: { marker: 's' }, timeoutMs: 100 },
      ],
    });
    expect(input.steps[0]?.planned?.effect).toBe('unsafe'); // config override of readOnlyHint
    const e = await errorOf(callStep(registry, input.steps[0]!, ctx({}, 'job_x:unsafe:1')));
    expect(e).toMatchObject({ reason: 'needs_confirmation', category: 'timeout', details: { server: 'raw', tool: 'late', idempotencyKey: 'job_x:unsafe:1' } });
    expect(typeof (e as WaitRequestedError).details?.requestId).toBe('number');

    const ro = await plan({ steps: [{ id: 'ro', server: 'raw', tool: 'late', arguments: { marker: 'r', delayMs: 1000 }, timeoutMs: 100 }] });
    const ro0 = { ...ro.steps[0]!, planned: { ...ro.steps[0]!.planned!, effect: 'none' as const } };
    const timeout = await errorOf(callStep(registry, ro0, ctx()));
    expect(timeout).toBeInstanceOf(StepwiseError);
    expect(timeout).toMatchObject({ code: 'downstream_timeout', category: 'timeout', retryable: true });
  });

  it('classifies an isError result from its text', async () => {
    const input = await plan({ steps: [{ id: 'f', server: 'raw', tool: 'fail', arguments: { message: 'upstream said: token expired' } }] });
    expect(await errorOf(callStep(registry, input.steps[0]!, ctx()))).toMatchObject({ code: 'downstream_unauthorized', category: 'unauthorized' });
    const nf = await plan({ steps: [{ id: 'g', server: 'fs', tool: 'read_text_file', arguments: { path: join(files, 'missing.txt') } }] });
    expect(await errorOf(callStep(registry, nf.steps[0]!, ctx()))).toMatchObject({ category: 'not_found', details: { server: 'fs', tool: 'read_text_file' } });
  });

  it('the job result lists each step with its request id and result', () => {
    const out = { requestId: 3, result: { content: [] }, resultRef: null, resultSha256: 'x' } as unknown as McpCallOutput;
    const input = McpChainInputSchema.parse({ steps: [{ id: 'a', server: 'fs', tool: 't' }] });
    expect(chain.result({ a: out }, input)).toEqual({ steps: [{ id: 'a', server: 'fs', tool: 't', requestId: 3, result: { content: [] }, resultRef: null }] });
  });
});
