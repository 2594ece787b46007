import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack, TransportKind } from '@stepwise/testing';
import { sc, startStack } from '@stepwise/testing';
import { createJobQueue, createRedis } from '@stepwise/shared';

const TRANSPORTS: TransportKind[] = ['stdio', 'http'];

describe.each(TRANSPORTS)('job tools over %s', (transport) => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack(transport, { workers: 1 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('lists the job tools with output schemas, annotations and each job type\'s input schema', async () => {
    const { tools } = await stack.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['cancel_job', 'get_job_history', 'get_job_status', 'list_job_types', 'list_jobs', 'respond_to_job', 'retry_job', 'start_job']);
    for (const t of tools) {
      expect(t.outputSchema?.type).toBe('object');
      expect(t.annotations).toBeDefined();
      expect(t.description?.length).toBeGreaterThan(40);
    }
    const start = tools.find((t) => t.name === 'start_job')!;
    const input = (start.inputSchema.properties as Record<string, { anyOf?: { title: string; properties?: Record<string, unknown> }[] }>).input!;
    const titles = input.anyOf!.map((s) => s.title);
    expect(titles).toEqual(expect.arrayContaining(['demo.steps', 'files.index', 'http.request']));
    expect(input.anyOf!.find((s) => s.title === 'demo.steps')!.properties).toHaveProperty('steps');
    expect(tools.find((t) => t.name === 'get_job_status')!.annotations!.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === 'start_job')!.annotations!.idempotentHint).toBe(true);
  });

  it('runs demo.steps to succeeded with progress notifications and per-step checkpoints', async () => {
    const progress: number[] = [];
    const r = await stack.call(
      'start_job',
      { type: 'demo.steps', input: { steps: 3, stepMs: 200 }, idempotencyKey: `happy-${transport}`, waitSeconds: 20 },
      (p) => progress.push(p.progress),
    );
    expect(r.isError).toBeFalsy();
    const job = sc(r);
    expect(job.status).toBe('succeeded');
    expect(job.deduplicated).toBe(false);
    expect(job.result).toMatchObject({ step: 3, sum: 6 });
    expect(job.stepsDone).toBe(3);
    expect(job.pollAfterMs).toBeNull();
    expect(progress.length).toBeGreaterThan(0);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress); // never decreases
    expect(progress.at(-1)).toBe(100);

    const status = await stack.call('get_job_status', { jobId: job.jobId, includeSteps: true });
    const steps = sc(status).steps as { name: string; status: string; output: { sum: number }; idempotencyKey: string }[];
    expect(steps.map((s) => [s.name, s.status])).toEqual([
      ['step-001', 'succeeded'],
      ['step-002', 'succeeded'],
      ['step-003', 'succeeded'],
    ]);
    expect(steps.map((s) => s.output.sum)).toEqual([1, 3, 6]); // later steps saw earlier outputs
    expect(steps[1]!.idempotencyKey).toBe(`${job.jobId}:step-002:1`);
    expect(status.content).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'resource_link', uri: `job://${job.jobId}` })]));

    const resource = await stack.client.readResource({ uri: `job://${job.jobId}` });
    const body = JSON.parse((resource.contents[0] as { text: string }).text) as { status: string; steps: unknown[] };
    expect(body.status).toBe('succeeded');
    expect(body.steps).toHaveLength(3);
  });

  it('returns the same job for the same key and an idempotency_conflict for a different input', async () => {
    const key = `dedup-${transport}`;
    const first = sc(await stack.call('start_job', { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: key }));
    const again = sc(await stack.call('start_job', { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: key }));
    expect(again.jobId).toBe(first.jobId);
    expect(again.deduplicated).toBe(true);
    // Let the worker finish the first job, so its own step and event rows do not land mid-count.
    await stack.call('get_job_status', { jobId: first.jobId, waitSeconds: 20 });

    const before = await stack.counts();
    const conflict = await stack.call('start_job', { type: 'demo.steps', input: { steps: 2 }, idempotencyKey: key });
    expect(conflict.isError).toBe(true);
    expect(sc(conflict)).toMatchObject({ code: 'idempotency_conflict', category: 'conflict', retryable: false });
    expect(await stack.counts()).toEqual(before);
  });

  it('creates exactly one job from 50 concurrent identical calls', async () => {
    const args = { type: 'demo.steps', input: { steps: 2 }, idempotencyKey: `burst-${transport}` };
    const results = await Promise.all(Array.from({ length: 50 }, () => stack.call('start_job', args)));
    const ids = new Set(results.map((r) => sc(r).jobId as string));
    expect(results.every((r) => !r.isError)).toBe(true);
    expect(ids.size).toBe(1);
    expect(results.filter((r) => sc(r).deduplicated === false)).toHaveLength(1);
    const [row] = await stack.db.sql<{ n: number }[]>`select count(*)::int as n from jobs where idempotency_key = ${args.idempotencyKey}`;
    expect(row!.n).toBe(1);
  });

  it('cancels a running job: the step is interrupted and the job ends cancelled', async () => {
    const started = sc(await stack.call('start_job', { type: 'demo.steps', input: { steps: 2, stepMs: 120_000 } }));
    // Wait until a worker holds it (status changes arrive through pub/sub; waitSeconds returns on 'running' only at the deadline, so poll briefly).
    for (let i = 0; i < 100 && sc(await stack.call('get_job_status', { jobId: started.jobId })).status !== 'running'; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const cancel = sc(await stack.call('cancel_job', { jobId: started.jobId, reason: 'e2e test' }));
    expect(cancel.outcome).toBe('cancel_requested');
    // The step would run for 120 s; the job ending within this 25 s wait proves the signal fired.
    const done = sc(await stack.call('get_job_status', { jobId: started.jobId, waitSeconds: 25, includeSteps: true }));
    expect(done.status).toBe('cancelled');
    expect(done.error).toMatchObject({ category: 'cancelled' });
    expect(done.stepsDone).toBe(0);
    const again = sc(await stack.call('cancel_job', { jobId: started.jobId }));
    expect(again.outcome).toBe('already_finished');
    const events = await stack.db.sql<{ kind: string; to_status: string }[]>`
      select kind, to_status from job_events where job_id = ${started.jobId} order by id`;
    expect(events.map((e) => e.kind)).toEqual(['created', 'transition', 'cancel_requested', 'transition']);
    expect(events.at(-1)!.to_status).toBe('cancelled');
  });

  it('cancels a pending job at once and removes it from the queue, so no worker ever runs it', async () => {
    await Promise.all(stack.workers.map((w) => w.stop()));
    const started = sc(await stack.call('start_job', { type: 'demo.steps', input: { steps: 2 } }));
    expect(started.status).toBe('pending');
    const [row] = await stack.db.sql<{ dispatch_id: string }[]>`select dispatch_id from jobs where id = ${started.jobId}`;
    const redis = createRedis(String(stack.env.REDIS_URL ?? 'redis://127.0.0.1:6379'));
    const queue = createJobQueue(redis, stack.prefix);
    try {
      expect(await queue.getJob(row!.dispatch_id)).toBeDefined();
      const cancel = sc(await stack.call('cancel_job', { jobId: started.jobId }));
      expect(cancel).toMatchObject({ outcome: 'cancelled', status: 'cancelled' });
      expect(await queue.getJob(row!.dispatch_id)).toBeUndefined();
    } finally {
      await queue.close();
      await redis.quit();
    }
    await stack.startWorker();
    const after = sc(await stack.call('get_job_status', { jobId: started.jobId, includeSteps: true }));
    expect(after.status).toBe('cancelled');
    expect(after.steps).toEqual([]);
  });

  it('retries a step that fails with a transient error and then succeeds', async () => {
    const r = sc(
      await stack.call('start_job', {
        type: 'demo.steps',
        input: { steps: 2, failAt: 2, failWith: 'transient', failTimes: 1 },
        waitSeconds: 20,
      }),
    );
    expect(r.status).toBe('succeeded');
    expect(r.result).toMatchObject({ step: 2, attempt: 2 });
  });

  it('fails a job whose step throws a non-retryable error, with the category shown', async () => {
    const r = sc(await stack.call('start_job', { type: 'demo.steps', input: { steps: 2, failAt: 1, failWith: 'invalid_input' }, waitSeconds: 20 }));
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ category: 'invalid_input', retryable: false });
    expect(r.summary).toMatch(/failed/);
  });

  it('indexes a fixture tree with files.index', async () => {
    const root = await mkdtemp(join(tmpdir(), 'stepwise-fixture-'));
    await mkdir(join(root, 'docs/deep'), { recursive: true });
    await mkdir(join(root, 'node_modules/pkg'), { recursive: true });
    await writeFile(join(root, 'README.md'), '# Fixture\nThe quick brown fox.\n');
    await writeFile(join(root, 'docs/guide.txt'), 'needle-in-a-haystack\n');
    await writeFile(join(root, 'docs/deep/data.json'), '{"a":1}\n');
    await writeFile(join(root, 'image.bin'), Buffer.from([0, 1, 2, 3, 0, 255]));
    await writeFile(join(root, 'node_modules/pkg/index.js'), 'ignored');
    try {
      const r = sc(await stack.call('start_job', { type: 'files.index', input: { root }, waitSeconds: 25 }));
      expect(r.status).toBe('succeeded');
      const result = r.result as { indexPath: string; files: number; textFiles: number };
      expect(result.files).toBe(4);
      expect(result.textFiles).toBe(3);
      const lines = (await readFile(result.indexPath, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { path: string; text?: string });
      expect(lines.map((l) => l.path).sort()).toEqual(['README.md', 'docs/deep/data.json', 'docs/guide.txt', 'image.bin']);
      expect(lines.find((l) => l.path === 'docs/guide.txt')!.text).toContain('needle-in-a-haystack');
      expect(lines.find((l) => l.path === 'image.bin')!.text).toBeUndefined();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('lists jobs newest first with a working cursor', async () => {
    const page1 = sc(await stack.call('list_jobs', { limit: 2 }));
    expect(page1.jobs).toHaveLength(2);
    expect(page1.nextCursor).toBeTruthy();
    const page2 = sc(await stack.call('list_jobs', { limit: 2, cursor: page1.nextCursor }));
    const ids = [...page1.jobs, ...page2.jobs].map((j: { jobId: string }) => j.jobId);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort().reverse()).toEqual(ids);
    const types = sc(await stack.call('list_job_types', {}));
    expect(types.types.map((t: { name: string }) => t.name)).toEqual(['demo.steps', 'files.index', 'http.request', 'mcp.chain']);
  });

  describe('bad input gets invalid_input and writes nothing', () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['unknown type', 'start_job', { type: 'no.such-type', input: {} }, 'unknown_job_type'],
      ['input failing its schema', 'start_job', { type: 'demo.steps', input: { steps: 'three' } }, 'invalid_input'],
      ['missing input fields', 'start_job', { type: 'demo.steps', input: {} }, 'invalid_input'],
      ['malformed job id', 'get_job_status', { jobId: "job_'; drop table jobs;--" }, 'invalid_input'],
      ['malformed id on cancel', 'cancel_job', { jobId: 'job:123' }, 'invalid_input'],
      ['waitSeconds over the cap', 'get_job_status', { jobId: 'job_00000000000000000000000000', waitSeconds: 600 }, 'invalid_input'],
      ['oversized payload', 'start_job', { type: 'demo.steps', input: { steps: 1, pad: 'x'.repeat(1_200_000) } }, 'payload_too_large'],
      ['deeply nested payload', 'start_job', { type: 'demo.steps', input: nest(60) }, 'payload_too_deep'],
    ];
    it.each(cases)('%s', async (_name, tool, args, code) => {
      const before = await stack.counts();
      const r = await stack.call(tool, args);
      expect(r.isError).toBe(true);
      expect(sc(r)).toMatchObject({ category: 'invalid_input', code, retryable: false });
      expect(await stack.counts()).toEqual(before);
    });

    it('an unknown job id is not_found and writes nothing', async () => {
      const before = await stack.counts();
      const r = await stack.call('cancel_job', { jobId: 'job_00000000000000000000000000' });
      expect(sc(r)).toMatchObject({ category: 'not_found', code: 'job_not_found' });
      expect(await stack.counts()).toEqual(before);
    });
  });
});

function nest(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { steps: 1 };
  for (let i = 0; i < depth; i++) v = { n: v };
  return v;
}
