import { describe, it, expect } from 'vitest';
import { z } from 'zod';
import {
  classifyError,
  errorFromHttpStatus,
  isTransientInfrastructureError,
  isTransientPostgresCode,
  parseRetryAfter,
} from './classify-error.js';
import { StepwiseError } from './stepwise-error.js';
import { TransientError } from './transient-error.js';
import { RateLimitedError } from './rate-limited-error.js';
import { InvalidInputError } from './invalid-input-error.js';
import { CancelledError } from './cancelled-error.js';
import { ConflictError } from './conflict-error.js';
import { StepTimeoutError } from './step-timeout-error.js';
import { LeaseLostError } from './lease-lost-error.js';
import { JobNotFoundError } from './job-not-found-error.js';

/** An error shaped like the ones postgres.js raises for server errors. */
function pgError(code: string, message = `pg error ${code}`): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR', severity_local: 'ERROR' });
}

function netError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -1, syscall: 'connect' });
}

describe('classifyError: StepwiseError passthrough', () => {
  it.each([
    new TransientError('t'),
    new RateLimitedError('slow down', 2_000),
    new InvalidInputError('bad'),
    new CancelledError(),
    new LeaseLostError('job_x', 3),
    new JobNotFoundError('job_x'),
    new StepwiseError('custom', 'internal', 'custom', { retryable: false }),
  ])('returns %s unchanged (same instance)', (e) => {
    expect(classifyError(e)).toBe(e);
  });
});

describe('classifyError: network failures', () => {
  it.each([
    'ECONNRESET',
    'ECONNREFUSED',
    'ECONNABORTED',
    'ETIMEDOUT',
    'EPIPE',
    'ENOTFOUND',
    'EAI_AGAIN',
    'ENETUNREACH',
    'EHOSTUNREACH',
    'UND_ERR_SOCKET',
    'UND_ERR_CONNECT_TIMEOUT',
    'CONNECTION_CLOSED',
    'CONNECTION_ENDED',
    'CONNECTION_DESTROYED',
    'CONNECT_TIMEOUT',
  ])('%s → transient network_error, retryable, cause kept', (code) => {
    const e = netError(code);
    expect(isTransientInfrastructureError(e)).toBe(true);
    const c = classifyError(e);
    expect(c).toBeInstanceOf(TransientError);
    expect(c.category).toBe('transient');
    expect(c.code).toBe('network_error');
    expect(c.retryable).toBe(true);
    expect(c.cause).toBe(e);
    expect(c.message).toBe(e.message);
  });

  it('finds a network code on a wrapped cause', () => {
    const inner = netError('ECONNRESET');
    const outer = new Error('query failed', { cause: inner });
    expect(isTransientInfrastructureError(outer)).toBe(true);
    expect(classifyError(outer).code).toBe('network_error');
  });

  it('recognises ioredis dead-connection messages without a code', () => {
    for (const m of ['Connection is closed.', "Stream isn't writeable and enableOfflineQueue options is false", 'Reached the max retries per request limit (which is 2).']) {
      expect(isTransientInfrastructureError(new Error(m))).toBe(true);
      expect(classifyError(new Error(m)).code).toBe('network_error');
    }
  });

  it('does not treat unrelated codes as network failures', () => {
    expect(isTransientInfrastructureError(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe(false);
    expect(isTransientInfrastructureError(Object.assign(new Error('x'), { code: 'ERR_INVALID_ARG_TYPE' }))).toBe(false);
    expect(isTransientInfrastructureError(null)).toBe(false);
    expect(isTransientInfrastructureError('ECONNRESET')).toBe(false);
  });

  it('does not loop on a self-referencing cause', () => {
    const e = new Error('self') as Error & { cause?: unknown };
    e.cause = e;
    expect(isTransientInfrastructureError(e)).toBe(false);
  });
});

describe('classifyError: Postgres SQLSTATEs', () => {
  it.each([
    ['08000', 'connection_exception'],
    ['08003', 'connection_does_not_exist'],
    ['08006', 'connection_failure'],
    ['08P01', 'protocol_violation'],
    ['53000', 'insufficient_resources'],
    ['53300', 'too_many_connections'],
    ['57P01', 'admin_shutdown'],
    ['57P03', 'cannot_connect_now'],
    ['40001', 'serialization_failure'],
    ['40P01', 'deadlock_detected'],
  ])('%s (%s) is transient', (code) => {
    expect(isTransientPostgresCode(code)).toBe(true);
    const e = pgError(code);
    expect(isTransientInfrastructureError(e)).toBe(true);
    const c = classifyError(e);
    expect(c.category).toBe('transient');
    expect(c.code).toBe('network_error');
    expect(c.retryable).toBe(true);
    expect(c.cause).toBe(e);
  });

  it.each([
    ['23505', 'unique_violation'],
    ['23503', 'foreign_key_violation'],
    ['22P02', 'invalid_text_representation'],
    ['42P01', 'undefined_table'],
    ['42703', 'undefined_column'],
    ['40002', 'transaction_integrity_constraint_violation'],
    ['XX000', 'internal_error'],
  ])('%s (%s) is not a transient infrastructure failure', (code) => {
    expect(isTransientPostgresCode(code)).toBe(false);
    const e = pgError(code);
    expect(isTransientInfrastructureError(e)).toBe(false);
    expect(classifyError(e).code).not.toBe('network_error');
  });

  it('reads a 5-character code as a SQLSTATE only when the error looks like a server error (has severity)', () => {
    const noSeverity = Object.assign(new Error('x'), { code: '40001' });
    expect(isTransientInfrastructureError(noSeverity)).toBe(false);
    expect(isTransientInfrastructureError({ code: '40001', severity: 'ERROR' })).toBe(true);
    expect(isTransientInfrastructureError({ code: '23505', severity: 'ERROR' })).toBe(false);
  });
});

describe('errorFromHttpStatus', () => {
  it('returns undefined below 400', () => {
    for (const s of [200, 201, 204, 301, 302, 304]) expect(errorFromHttpStatus(s, 'ctx')).toBeUndefined();
  });

  it('429 with delta-seconds Retry-After → rate_limited with that delay', () => {
    const e = errorFromHttpStatus(429, 'GitHub API', '5');
    expect(e).toBeInstanceOf(RateLimitedError);
    expect(e?.category).toBe('rate_limited');
    expect(e?.retryable).toBe(true);
    expect(e?.retryAfterMs).toBe(5_000);
    expect(e?.details).toEqual({ status: 429 });
    expect(e?.message).toContain('GitHub API');
    expect(e?.message).toContain('429');
  });

  it('429 with an HTTP-date Retry-After → rate_limited with the time until then', () => {
    const at = new Date(Date.now() + 3_600_000);
    const e = errorFromHttpStatus(429, 'ctx', at.toUTCString());
    expect(e?.category).toBe('rate_limited');
    // The header has whole seconds, so the delay is at most the hour and at least the hour minus slack.
    expect(e?.retryAfterMs).toBeLessThanOrEqual(3_600_000);
    expect(e?.retryAfterMs).toBeGreaterThan(3_500_000);
  });

  it('429 with an HTTP-date in the past → retry at once (0)', () => {
    expect(errorFromHttpStatus(429, 'ctx', 'Wed, 21 Oct 2015 07:28:00 GMT')?.retryAfterMs).toBe(0);
  });

  it('429 without (or with an unreadable) Retry-After → rate_limited with a 1 s default', () => {
    expect(errorFromHttpStatus(429, 'ctx')?.retryAfterMs).toBe(1_000);
    expect(errorFromHttpStatus(429, 'ctx', null)?.retryAfterMs).toBe(1_000);
    expect(errorFromHttpStatus(429, 'ctx', 'soon')?.retryAfterMs).toBe(1_000);
  });

  it('503 with Retry-After → rate_limited honouring it', () => {
    const e = errorFromHttpStatus(503, 'ctx', '30');
    expect(e).toBeInstanceOf(RateLimitedError);
    expect(e?.retryAfterMs).toBe(30_000);
    expect(e?.details).toEqual({ status: 503 });
  });

  it('503 without Retry-After → transient server error', () => {
    const e = errorFromHttpStatus(503, 'ctx');
    expect(e).toBeInstanceOf(TransientError);
    expect(e?.code).toBe('http_server_error');
    expect(e?.retryable).toBe(true);
    expect(e?.retryAfterMs).toBeUndefined();
  });

  it.each([
    [400, 'invalid_input', 'http_invalid_input', false],
    [422, 'invalid_input', 'http_invalid_input', false],
    [401, 'unauthorized', 'http_unauthorized', false],
    [403, 'forbidden', 'http_forbidden', false],
    [404, 'not_found', 'http_not_found', false],
    [408, 'timeout', 'http_timeout', true],
    [409, 'conflict', 'http_conflict', false],
    [418, 'invalid_input', 'http_error', false],
    [500, 'transient', 'http_server_error', true],
    [502, 'transient', 'http_server_error', true],
    [504, 'transient', 'http_server_error', true],
  ] as const)('%i → %s (%s), retryable=%s', (status, category, code, retryable) => {
    const e = errorFromHttpStatus(status, 'Downstream', null);
    expect(e).toBeInstanceOf(StepwiseError);
    expect(e?.category).toBe(category);
    expect(e?.code).toBe(code);
    expect(e?.retryable).toBe(retryable);
    expect(e?.details).toEqual({ status });
    expect(e?.message).toContain('Downstream');
  });

  it('409 is a ConflictError', () => {
    expect(errorFromHttpStatus(409, 'ctx')).toBeInstanceOf(ConflictError);
  });

  it('a Retry-After on a 4xx other than 429 does not make it retryable', () => {
    const e = errorFromHttpStatus(400, 'ctx', '5');
    expect(e?.retryable).toBe(false);
    expect(e?.retryAfterMs).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2025, 0, 1, 0, 0, 0);

  it('is undefined for a missing or empty header', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('')).toBeUndefined();
  });

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('1', now)).toBe(1_000);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 7 ', now)).toBe(7_000);
    expect(parseRetryAfter('1.5', now)).toBe(1_500);
  });

  it('reads an HTTP-date relative to now', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
  });

  it('clamps a date in the past to 0', () => {
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', now)).toBe(0);
  });

  it('is undefined for garbage', () => {
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('not a date at all', now)).toBeUndefined();
  });
});

describe('classifyError: HTTP-shaped errors', () => {
  it('maps `status` with a Headers Retry-After', () => {
    const e = Object.assign(new Error('GET /x failed'), { status: 429, headers: new Headers({ 'Retry-After': '2' }) });
    const c = classifyError(e);
    expect(c).toBeInstanceOf(RateLimitedError);
    expect(c.retryAfterMs).toBe(2_000);
    expect(c.message).toContain('GET /x failed');
  });

  it('maps `statusCode` with a plain-object retry-after header', () => {
    const e = Object.assign(new Error('upstream'), { statusCode: 503, headers: { 'retry-after': '4' } });
    const c = classifyError(e);
    expect(c.category).toBe('rate_limited');
    expect(c.retryAfterMs).toBe(4_000);
  });

  it.each([
    [400, 'invalid_input'],
    [401, 'unauthorized'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [409, 'conflict'],
    [422, 'invalid_input'],
    [500, 'transient'],
    [503, 'transient'],
  ] as const)('status %i → %s', (status, category) => {
    expect(classifyError(Object.assign(new Error('http'), { status })).category).toBe(category);
  });

  it('ignores a `status` outside 400-599', () => {
    const c = classifyError(Object.assign(new Error('odd'), { status: 200 }));
    expect(c.code).toBe('unexpected_error');
  });
});

describe('classifyError: zod, abort, timeout and unknown', () => {
  it('a ZodError → invalid_input with the issue paths', () => {
    const r = z.object({ a: z.object({ b: z.number() }) }).safeParse({ a: { b: 'x' } });
    expect(r.success).toBe(false);
    const c = classifyError(r.error);
    expect(c).toBeInstanceOf(InvalidInputError);
    expect(c.category).toBe('invalid_input');
    expect(c.retryable).toBe(false);
    expect((c as InvalidInputError).issues[0]?.path).toBe('a.b');
  });

  it('a thrown ZodError from parse() → invalid_input', () => {
    let thrown: unknown;
    try {
      z.string().parse(1);
    } catch (e: unknown) {
      thrown = e;
    }
    expect(classifyError(thrown).category).toBe('invalid_input');
  });

  it('an AbortError (DOMException from AbortController) → cancelled', () => {
    const ac = new AbortController();
    ac.abort();
    let thrown: unknown;
    try {
      ac.signal.throwIfAborted();
    } catch (e: unknown) {
      thrown = e;
    }
    const c = classifyError(thrown);
    expect(c).toBeInstanceOf(CancelledError);
    expect(c.category).toBe('cancelled');
    expect(c.retryable).toBe(false);
  });

  it('an Error named AbortError → cancelled', () => {
    const e = new Error('The operation was aborted');
    e.name = 'AbortError';
    expect(classifyError(e).category).toBe('cancelled');
  });

  it('an AbortError whose cause or reason is a StepwiseError yields that error', () => {
    const timeout = new StepTimeoutError('fetch', 1000);
    const withCause = new Error('aborted', { cause: timeout });
    withCause.name = 'AbortError';
    expect(classifyError(withCause)).toBe(timeout);
    const withReason = Object.assign(new Error('aborted'), { name: 'AbortError', reason: new CancelledError('stop') });
    expect(classifyError(withReason).message).toBe('stop');
  });

  it('a TimeoutError (AbortSignal.timeout) → timeout, retryable', () => {
    const c = classifyError(new DOMException('The operation timed out.', 'TimeoutError'));
    expect(c.category).toBe('timeout');
    expect(c.retryable).toBe(true);
  });

  it('an unknown Error → transient unexpected_error keeping message and cause', () => {
    const e = new Error('boom');
    const c = classifyError(e);
    expect(c).toBeInstanceOf(TransientError);
    expect(c.code).toBe('unexpected_error');
    expect(c.category).toBe('transient');
    expect(c.retryable).toBe(true);
    expect(c.message).toBe('boom');
    expect(c.cause).toBe(e);
  });

  it('non-Error throws → transient unexpected_error', () => {
    expect(classifyError('just a string')).toMatchObject({ code: 'unexpected_error', category: 'transient', message: 'just a string' });
    expect(classifyError({ weird: true }).code).toBe('unexpected_error');
    expect(classifyError(42).message).toBe('42');
  });

  it('an Error with an empty message gets a readable one', () => {
    expect(classifyError(new Error('')).message).toBe('unexpected error');
  });

  it('always returns a StepwiseError whose info validates', () => {
    for (const e of [new Error('x'), 'x', null, undefined, pgError('40001'), netError('EPIPE'), { status: 404 }]) {
      const c = classifyError(e);
      expect(c).toBeInstanceOf(StepwiseError);
      expect(typeof c.toInfo().message).toBe('string');
    }
  });
});
