import { describe, it, expect } from 'vitest';
import { ZodError } from 'zod';
import { DEFAULT_RETRY_POLICY, RetryPolicySchema, backoffDelayMs, decideRetry, mergeRetryPolicy } from './retry-policy.js';
import type { RetryDecision, RetryPolicy } from './retry-policy.js';
import { ERROR_CATEGORIES } from '../errors/error-category.js';
import type { ErrorCategory } from '../errors/error-category.js';

const policy: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 60_000, factor: 2 };
const fixed = (v: number) => () => v;
const noRandom = () => {
  throw new Error('random() must not be consulted');
};

// Hand-written from DESIGN §6 and the retry module's contract. A Record over ErrorCategory makes
// the compiler insist every category has an expectation.
const EXPECTED_FIRST_ATTEMPT: Record<ErrorCategory, RetryDecision['kind']> = {
  transient: 'retry',
  rate_limited: 'retry',
  timeout: 'retry',
  invalid_input: 'fail',
  unauthorized: 'wait',
  forbidden: 'fail',
  not_found: 'fail',
  conflict: 'fail',
  cancelled: 'cancel',
  internal: 'fail',
};

describe('decideRetry', () => {
  it('has an expectation for every error category', () => {
    expect(Object.keys(EXPECTED_FIRST_ATTEMPT).sort()).toEqual([...ERROR_CATEGORIES].sort());
  });

  it.each(ERROR_CATEGORIES.map((c) => [c, EXPECTED_FIRST_ATTEMPT[c]] as const))(
    '%s on attempt 1 (retryable as its category says) → %s',
    (category, kind) => {
      const retryable = kind === 'retry';
      const d = decideRetry({ category, retryable, retryAfterMs: undefined }, 1, policy, fixed(0.5));
      expect(d.kind).toBe(kind);
      if (d.kind === 'retry') expect(d.delayMs).toBe(500);
      if (d.kind === 'wait') expect(d.reason).toBe('needs_reauthorization');
    },
  );

  it.each(ERROR_CATEGORIES.filter((c) => EXPECTED_FIRST_ATTEMPT[c] !== 'retry'))(
    '%s never retries, even when marked retryable with a Retry-After and attempts remain',
    (category) => {
      const d = decideRetry({ category, retryable: true, retryAfterMs: 10 }, 1, { ...policy, maxAttempts: 100 }, noRandom);
      expect(d.kind).toBe(EXPECTED_FIRST_ATTEMPT[category]);
    },
  );

  it.each(['transient', 'rate_limited', 'timeout'] as const)('%s that is marked non-retryable fails', (category) => {
    expect(decideRetry({ category, retryable: false, retryAfterMs: undefined }, 1, policy, fixed(0.5))).toEqual({ kind: 'fail' });
    expect(decideRetry({ category, retryable: false, retryAfterMs: 100 }, 1, policy, fixed(0.5))).toEqual({ kind: 'fail' });
  });

  it('retries while attempt < maxAttempts and fails from attempt == maxAttempts on', () => {
    const err = { category: 'transient' as const, retryable: true, retryAfterMs: undefined };
    expect(decideRetry(err, 1, policy, fixed(0)).kind).toBe('retry');
    expect(decideRetry(err, 2, policy, fixed(0)).kind).toBe('retry');
    expect(decideRetry(err, 3, policy, fixed(0))).toEqual({ kind: 'fail' });
    expect(decideRetry(err, 4, policy, fixed(0))).toEqual({ kind: 'fail' });
  });

  it('maxAttempts 1 means the first failure is final', () => {
    const d = decideRetry({ category: 'timeout', retryable: true, retryAfterMs: undefined }, 1, { ...policy, maxAttempts: 1 }, fixed(0.5));
    expect(d).toEqual({ kind: 'fail' });
  });

  it('a Retry-After does not buy extra attempts', () => {
    const d = decideRetry({ category: 'rate_limited', retryable: true, retryAfterMs: 1 }, 3, policy, noRandom);
    expect(d).toEqual({ kind: 'fail' });
  });

  it('honours retryAfterMs instead of the jittered backoff', () => {
    const d = decideRetry({ category: 'rate_limited', retryable: true, retryAfterMs: 7_500 }, 1, policy, noRandom);
    expect(d).toEqual({ kind: 'retry', delayMs: 7_500 });
  });

  it('honours a retryAfterMs of 0', () => {
    expect(decideRetry({ category: 'transient', retryable: true, retryAfterMs: 0 }, 2, policy, noRandom)).toEqual({ kind: 'retry', delayMs: 0 });
  });

  it('caps retryAfterMs at maxDelayMs', () => {
    const d = decideRetry({ category: 'rate_limited', retryable: true, retryAfterMs: 3_600_000 }, 1, policy, noRandom);
    expect(d).toEqual({ kind: 'retry', delayMs: 60_000 });
    const small = decideRetry({ category: 'rate_limited', retryable: true, retryAfterMs: 5_000 }, 1, { ...policy, maxDelayMs: 2_000 }, noRandom);
    expect(small).toEqual({ kind: 'retry', delayMs: 2_000 });
  });

  it('uses the jittered backoff for the attempt that failed', () => {
    const err = { category: 'transient' as const, retryable: true, retryAfterMs: undefined };
    const p = { ...policy, maxAttempts: 10 };
    expect(decideRetry(err, 1, p, fixed(0.5))).toEqual({ kind: 'retry', delayMs: 500 });
    expect(decideRetry(err, 2, p, fixed(0.5))).toEqual({ kind: 'retry', delayMs: 1000 });
    expect(decideRetry(err, 3, p, fixed(0.5))).toEqual({ kind: 'retry', delayMs: 2000 });
  });

  it('defaults to DEFAULT_RETRY_POLICY (3 attempts)', () => {
    const err = { category: 'transient' as const, retryable: true, retryAfterMs: undefined };
    expect(decideRetry(err, 2).kind).toBe('retry');
    expect(decideRetry(err, 3)).toEqual({ kind: 'fail' });
  });
});

describe('backoffDelayMs', () => {
  it.each([
    // attempt, random, expected  (base 1000, factor 2, cap 60000)
    [1, 0, 0],
    [1, 0.5, 500],
    [1, 0.999999, 999],
    [2, 0, 0],
    [2, 0.5, 1000],
    [2, 0.999999, 1999],
    [3, 0.5, 2000],
    [4, 0.25, 2000],
    [6, 0.5, 16_000],
    [6, 0.999999, 31_999],
    // 1000·2^6 = 64000 > cap
    [7, 0.5, 30_000],
    [7, 0.999999, 59_999],
    [30, 0.5, 30_000],
    [30, 0.999999, 59_999],
  ])('attempt %i with random %d → %i ms', (attempt, r, expected) => {
    expect(backoffDelayMs(attempt, policy, fixed(r))).toBe(expected);
  });

  it('treats attempts below 1 like attempt 1', () => {
    expect(backoffDelayMs(0, policy, fixed(0.5))).toBe(500);
    expect(backoffDelayMs(-3, policy, fixed(0.5))).toBe(500);
  });

  it('never exceeds the cap, even with a huge factor', () => {
    const p = { maxAttempts: 100, baseDelayMs: 1000, maxDelayMs: 5_000, factor: 10 };
    for (let a = 1; a <= 100; a++) expect(backoffDelayMs(a, p, fixed(0.9999999))).toBeLessThan(5_000);
    expect(backoffDelayMs(100, p, fixed(0.5))).toBe(2_500);
  });

  it('is 0 when the base delay is 0', () => {
    expect(backoffDelayMs(5, { ...policy, baseDelayMs: 0 }, fixed(0.9))).toBe(0);
  });

  it('is an integer number of milliseconds', () => {
    expect(Number.isInteger(backoffDelayMs(1, { ...policy, baseDelayMs: 333 }, fixed(0.123456)))).toBe(true);
  });

  it('full jitter: 10,000 samples are uniform over [0, ceiling)', () => {
    const attempt = 4;
    const ceiling = 8_000; // min(60000, 1000·2^3)
    const n = 10_000;
    const buckets = new Array<number>(10).fill(0);
    let sum = 0;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    let nonIntegers = 0;
    for (let i = 0; i < n; i++) {
      const d = backoffDelayMs(attempt, policy);
      if (!Number.isInteger(d)) nonIntegers++;
      sum += d;
      min = Math.min(min, d);
      max = Math.max(max, d);
      const b = Math.floor((d / ceiling) * 10);
      buckets[b] = (buckets[b] ?? 0) + 1;
    }
    expect(nonIntegers).toBe(0);
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(ceiling);
    expect(buckets).toHaveLength(10); // nothing landed at or beyond the ceiling
    // The sample mean of U[0, 8000) has sd ≈ 23 ms at n = 10,000; 3% (120 ms) is > 5 sd.
    expect(Math.abs(sum / n - ceiling / 2)).toBeLessThan(ceiling / 2 * 0.03);
    // Each decile expects 1,000 (sd ≈ 30); 700..1300 is a 10-sd band and still rules out
    // "no jitter" or "equal jitter" (which would leave the lower half empty).
    for (const count of buckets) {
      expect(count).toBeGreaterThan(700);
      expect(count).toBeLessThan(1300);
    }
    // Full (not equal) jitter: small delays are as likely as large ones.
    expect(min).toBeLessThan(ceiling * 0.05);
  });

  it('full jitter at the cap: samples spread over [0, maxDelayMs)', () => {
    const p = { ...policy, maxDelayMs: 3_000 };
    const samples = Array.from({ length: 10_000 }, () => backoffDelayMs(20, p));
    expect(Math.max(...samples)).toBeLessThan(3_000);
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
    expect(Math.abs(mean - 1_500)).toBeLessThan(1_500 * 0.03);
  });
});

describe('mergeRetryPolicy', () => {
  it('with no layers gives the defaults', () => {
    expect(mergeRetryPolicy()).toEqual({ maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 60_000, factor: 2 });
    expect(DEFAULT_RETRY_POLICY).toEqual(mergeRetryPolicy());
  });

  it('later layers win field by field: defaults ← job type ← step', () => {
    const jobType = { maxAttempts: 5, baseDelayMs: 200 };
    const step = { baseDelayMs: 50, factor: 3 };
    expect(mergeRetryPolicy(DEFAULT_RETRY_POLICY, jobType, step)).toEqual({
      maxAttempts: 5,
      baseDelayMs: 50,
      maxDelayMs: 60_000,
      factor: 3,
    });
  });

  it('skips undefined layers', () => {
    expect(mergeRetryPolicy(undefined, { maxAttempts: 7 }, undefined)).toEqual({ ...DEFAULT_RETRY_POLICY, maxAttempts: 7 });
  });

  it('does not mutate its inputs', () => {
    const a = { maxAttempts: 4 };
    const b = { maxAttempts: 9 };
    mergeRetryPolicy(a, b);
    expect(a).toEqual({ maxAttempts: 4 });
    expect(b).toEqual({ maxAttempts: 9 });
  });

  it('validates the merged result', () => {
    expect(() => mergeRetryPolicy({ maxAttempts: 0 })).toThrow(ZodError);
    expect(() => mergeRetryPolicy({ factor: 0.5 })).toThrow(ZodError);
    expect(() => mergeRetryPolicy({ baseDelayMs: -1 })).toThrow(ZodError);
    expect(() => mergeRetryPolicy({ maxAttempts: 101 })).toThrow(ZodError);
    // A later valid layer repairs an earlier bad value, since only the merge is validated.
    expect(mergeRetryPolicy({ maxAttempts: 0 }, { maxAttempts: 2 }).maxAttempts).toBe(2);
  });

  it('RetryPolicySchema fills defaults', () => {
    expect(RetryPolicySchema.parse({ maxAttempts: 1 })).toEqual({ maxAttempts: 1, baseDelayMs: 1000, maxDelayMs: 60_000, factor: 2 });
  });
});
