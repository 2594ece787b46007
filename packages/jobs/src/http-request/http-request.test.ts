import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError, classifyError, ConflictError, FsBlobStore, RateLimitedError, StepTimeoutError, StepwiseError, TransientError } from '@stepwise/shared';
import { requestStepFor } from './testing/request-step.js';
import { startTestServer } from './testing/test-server.js';
import type { TestServer } from './testing/test-server.js';

let server: TestServer;
let blobRoot: string;
let blobs: FsBlobStore;

beforeAll(async () => {
  server = await startTestServer();
  blobRoot = await mkdtemp(join(tmpdir(), 'http-request-blobs-'));
  blobs = new FsBlobStore(blobRoot);
});

afterAll(async () => {
  await server.close();
  await rm(blobRoot, { recursive: true, force: true });
});

const step = (raw: Record<string, unknown>) => requestStepFor(raw, blobs);

/** Runs the step expecting it to throw, and returns what it threw. */
async function failure(raw: Record<string, unknown>): Promise<unknown> {
  const t = step(raw);
  return t.run().then(
    () => {
      throw new Error('expected the request to fail');
    },
    (e: unknown) => e,
  );
}

describe('http.request: successful responses', () => {
  it('returns status, the safe header subset and parsed JSON', async () => {
    const t = step({ method: 'POST', url: server.url('/json?status=201'), body: { n: 1 }, honoursIdempotencyKey: true });
    const out = await t.run();
    expect(out).toEqual({
      status: 201,
      headers: { 'content-type': 'application/json; charset=utf-8', etag: '"v1"', location: '/things/1' },
      body: { ok: true, method: 'POST', body: '{"n":1}', key: t.ctx.idempotencyKey },
      truncated: false,
    });
  });

  it('sends Idempotency-Key equal to ctx.idempotencyKey, the caller headers, and a JSON body as JSON', async () => {
    const t = step({ method: 'PATCH', url: server.url('/echo'), headers: { 'X-Trace': 'abc', Authorization: 'Bearer t' }, body: [1, 'two'] });
    const arrived = server.nextRequest('/echo');
    await t.run();
    const req = await arrived;
    expect(req.headers['idempotency-key']).toBe(t.ctx.idempotencyKey);
    expect(req.headers['x-trace']).toBe('abc');
    expect(req.headers['authorization']).toBe('Bearer t');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.method).toBe('PATCH');
    expect(req.body).toBe('[1,"two"]');
  });

  it('sends a string body exactly as given, with the caller Content-Type', async () => {
    const t = step({ method: 'PUT', url: server.url('/echo'), headers: { 'content-type': 'text/csv' }, body: 'a,b\n1,2\n' });
    const arrived = server.nextRequest('/echo');
    await t.run();
    const req = await arrived;
    expect(req.body).toBe('a,b\n1,2\n');
    expect(req.headers['content-type']).toBe('text/csv');
  });

  it('returns text for non-JSON responses and "" for HEAD', async () => {
    expect((await step({ url: server.url('/text') }).run()).body).toBe('hello, world');
    const head = await step({ method: 'HEAD', url: server.url('/json') }).run();
    expect(head).toMatchObject({ status: 200, body: '', truncated: false });
  });

  it('counts one request per run under the same key: a replay of an idempotent write reuses it', async () => {
    const raw = { method: 'POST', url: server.url('/effects?honour=1'), honoursIdempotencyKey: true };
    const t = step(raw);
    expect((await t.run()).status).toBe(201);
    // The runner replays with the same ctx.idempotencyKey after a crash; the endpoint deduplicates.
    const replay = await t.step.run(t.ctx);
    expect(replay).toMatchObject({ status: 200, body: { replayed: true } });
    expect(server.count(t.ctx.idempotencyKey)).toBe(2);
    expect(server.applied(t.ctx.idempotencyKey)).toBe(1);
  });
});

describe('http.request: bounded bodies', () => {
  it('cuts a huge body at maxResponseBytes and flags it', async () => {
    const out = await step({ url: server.url('/huge?bytes=5000000'), maxResponseBytes: 1000 }).run();
    expect(out.truncated).toBe(true);
    expect(out.body).toBe('x'.repeat(1000));
  });

  it('returns a truncated JSON body as text, and a body of exactly the limit as complete', async () => {
    const cut = await step({ url: server.url('/huge?bytes=2048&type=application/json'), maxResponseBytes: 2047 }).run();
    expect(cut).toMatchObject({ truncated: true, body: 'x'.repeat(2047) });
    const exact = await step({ url: server.url('/huge?bytes=2048'), maxResponseBytes: 2048 }).run();
    expect(exact).toMatchObject({ truncated: false, body: 'x'.repeat(2048) });
  });

  it('never ends a truncated body in half a UTF-8 character', async () => {
    const out = await step({ url: server.url('/utf8?chars=100'), maxResponseBytes: 11 }).run();
    expect(out).toMatchObject({ truncated: true, body: 'é'.repeat(5) });
  });
});

describe('http.request: error responses become typed errors', () => {
  const cases: { path: string; ctor: unknown; category: string; code: string; retryable: boolean; retryAfterMs: number | undefined }[] = [
    { path: '/status/429?retryAfter=2', ctor: RateLimitedError, category: 'rate_limited', code: 'rate_limited', retryable: true, retryAfterMs: 2000 },
    { path: '/status/429', ctor: RateLimitedError, category: 'rate_limited', code: 'rate_limited', retryable: true, retryAfterMs: 1000 },
    { path: '/status/503?retryAfter=2', ctor: RateLimitedError, category: 'rate_limited', code: 'rate_limited', retryable: true, retryAfterMs: 2000 },
    { path: '/status/503', ctor: TransientError, category: 'transient', code: 'http_server_error', retryable: true, retryAfterMs: undefined },
    { path: '/status/500', ctor: TransientError, category: 'transient', code: 'http_server_error', retryable: true, retryAfterMs: undefined },
    { path: '/status/400', ctor: StepwiseError, category: 'invalid_input', code: 'http_invalid_input', retryable: false, retryAfterMs: undefined },
    { path: '/status/422', ctor: StepwiseError, category: 'invalid_input', code: 'http_invalid_input', retryable: false, retryAfterMs: undefined },
    { path: '/status/401', ctor: StepwiseError, category: 'unauthorized', code: 'http_unauthorized', retryable: false, retryAfterMs: undefined },
    { path: '/status/403', ctor: StepwiseError, category: 'forbidden', code: 'http_forbidden', retryable: false, retryAfterMs: undefined },
    { path: '/status/409', ctor: ConflictError, category: 'conflict', code: 'http_conflict', retryable: false, retryAfterMs: undefined },
  ];

  it.each(cases)('$path → $category (retryable $retryable, retryAfterMs $retryAfterMs)', async ({ path, ctor, category, code, retryable, retryAfterMs }) => {
    const e = await failure({ method: 'POST', url: server.url(`${path}${path.includes('?') ? '&' : '?'}token=secret`), body: {} });
    expect(e).toBeInstanceOf(ctor as new () => unknown);
    const error = e as StepwiseError;
    expect({ category: error.category, code: error.code, retryable: error.retryable, retryAfterMs: error.retryAfterMs }).toEqual({ category, code, retryable, retryAfterMs });
    const status = Number(/\/status\/(\d+)/.exec(path)?.[1]);
    expect(error.details).toMatchObject({ status, bodyExcerpt: expect.stringContaining(`answered ${status} on purpose`) });
    expect(String(error.details?.['bodyExcerpt']).length).toBeLessThanOrEqual(301);
    expect(error.message).toContain(`POST ${server.url(`/status/${status}`)}`);
    expect(error.message).not.toContain('token=secret');
    // The runner classifies what the step throws; a typed error passes through unchanged.
    expect(classifyError(e)).toBe(e);
  });

  it('retries nothing itself: one request per run, even for a 503', async () => {
    const t = step({ url: server.url('/status/503') });
    await t.run().catch(() => undefined);
    expect(server.count(t.ctx.idempotencyKey)).toBe(1);
  });
});

describe('http.request: network failures, timeouts and aborts', () => {
  it('lets a refused connection throw; classifyError maps it to transient', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const e = await failure({ url: `http://127.0.0.1:${port}/x` });
    expect(e).not.toBeInstanceOf(StepwiseError);
    expect(classifyError(e)).toMatchObject({ category: 'transient', retryable: true });
  });

  it('lets a reset connection throw; classifyError maps it to transient', async () => {
    const e = await failure({ url: server.url('/reset') });
    expect(classifyError(e)).toMatchObject({ category: 'transient', retryable: true });
  });

  it('fails with category timeout after timeoutMs', async () => {
    const started = Date.now();
    const e = await failure({ url: server.url('/slow'), timeoutMs: 150 });
    expect(e).toMatchObject({ category: 'timeout', code: 'http_request_timeout', retryable: true });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('rejects promptly with the signal reason when ctx.signal fires mid-request', async () => {
    const t = step({ method: 'POST', url: server.url('/slow'), body: 'x' });
    const arrived = server.nextRequest('/slow');
    const running = t.run();
    await arrived;
    const reason = new CancelledError('stopped by the test');
    const started = Date.now();
    t.controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('surfaces the runner timeout (ctx.signal) rather than its own', async () => {
    const t = step({ url: server.url('/slow'), timeoutMs: 5000 });
    const arrived = server.nextRequest('/slow');
    const running = t.run();
    await arrived;
    const reason = new StepTimeoutError('request', 100);
    t.controller.abort(reason);
    await expect(running).rejects.toBe(reason);
  });

  it('sends nothing when ctx.signal already fired', async () => {
    const t = step({ method: 'DELETE', url: server.url('/json') });
    const reason = new CancelledError('cancelled before start');
    t.controller.abort(reason);
    await expect(t.run()).rejects.toBe(reason);
    expect(server.count(t.ctx.idempotencyKey)).toBe(0);
  });

  it('stops reading a body when ctx.signal fires during the download', async () => {
    const t = step({ url: server.url('/huge?bytes=200000000'), maxResponseBytes: 16 * 1024 * 1024, timeoutMs: 60_000 });
    const arrived = server.nextRequest('/huge');
    const running = t.run();
    await arrived;
    const reason = new CancelledError('stop the download');
    t.controller.abort(reason);
    await expect(running).rejects.toBe(reason);
  });
});
