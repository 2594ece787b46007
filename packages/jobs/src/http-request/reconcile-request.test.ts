import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError, FsBlobStore } from '@stepwise/shared';
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

/** An unsafe POST to /effects (applied on every call) whose status is asked at `statusPath`. */
const unsafeWrite = (statusPath = '/effects/status', extra: Record<string, unknown> = {}) =>
  requestStepFor({ method: 'POST', url: server.url('/effects'), body: { n: 1 }, statusUrl: server.url(statusPath), ...extra }, blobs);

describe('http.request reconcile via statusUrl', () => {
  it('is done when the status URL answers 200 JSON for the key, with that response as output', async () => {
    const t = unsafeWrite('/effects/status', { headers: { Authorization: 'Bearer t' } });
    expect(t.step.effect).toBe('unsafe');
    await t.run();
    const arrived = server.nextRequest('/effects/status');
    const r = await t.reconcile();
    expect(r).toEqual({
      done: true,
      output: { status: 200, headers: { 'content-type': 'application/json; charset=utf-8' }, body: { key: t.ctx.idempotencyKey, applied: 1 }, truncated: false },
    });
    const req = await arrived;
    expect(req.method).toBe('GET');
    expect(req.headers['idempotency-key']).toBe(t.ctx.idempotencyKey);
    expect(req.headers['authorization']).toBe('Bearer t');
    expect(server.applied(t.ctx.idempotencyKey)).toBe(1);
  });

  it('is not done when the status URL answers 404 (the write never arrived)', async () => {
    const t = unsafeWrite();
    await expect(t.reconcile()).resolves.toEqual({ done: false });
    expect(server.applied(t.ctx.idempotencyKey)).toBe(0);
  });

  it.each(['/effects/pending', '/effects/html'])('refuses to guess on an unclear answer (%s)', async (path) => {
    const t = unsafeWrite(path);
    await expect(t.reconcile()).rejects.toMatchObject({ code: 'http_reconcile_unclear', category: 'conflict', retryable: false });
  });

  it('throws the typed error when the status URL fails', async () => {
    await expect(unsafeWrite('/status/401').reconcile()).rejects.toMatchObject({ category: 'unauthorized', details: { status: 401 } });
    await expect(unsafeWrite('/status/503?retryAfter=2').reconcile()).rejects.toMatchObject({ category: 'rate_limited', retryAfterMs: 2000 });
  });

  it('rejects with the signal reason when ctx.signal fires', async () => {
    const t = unsafeWrite('/slow');
    const arrived = server.nextRequest('/slow');
    const running = t.reconcile();
    await arrived;
    const reason = new CancelledError('stop reconciling');
    t.controller.abort(reason);
    await expect(running).rejects.toBe(reason);
  });
});
