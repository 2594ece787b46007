import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { idempotencyHash, requestHash, sha256Hex } from './idempotency-hash.js';
import type { TenantId } from '../ids.js';

const t = (s: string) => s as TenantId;
const HEX64 = /^[0-9a-f]{64}$/;

describe('sha256Hex', () => {
  it('matches node:crypto for strings and bytes', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(new TextEncoder().encode('abc'))).toBe(sha256Hex('abc'));
    expect(sha256Hex('é')).toBe(createHash('sha256').update('é', 'utf8').digest('hex'));
  });
});

describe('idempotencyHash', () => {
  const base = idempotencyHash(t('acme'), 'demo.steps', { steps: 3 });

  it('is 64 lower-case hex chars with no ":" (usable as a BullMQ jobId)', () => {
    expect(base).toMatch(HEX64);
    expect(base).not.toContain(':');
    expect(idempotencyHash(t('a:b'), 'x:y', { 'k:': ':' }, 'key:with:colons')).toMatch(HEX64);
  });

  it('is deterministic and independent of input key order', () => {
    expect(idempotencyHash(t('acme'), 'demo.steps', { steps: 3 })).toBe(base);
    const a = idempotencyHash(t('acme'), 'demo.steps', { steps: 3, stepMs: 10, effect: 'none' });
    const b = idempotencyHash(t('acme'), 'demo.steps', { effect: 'none', stepMs: 10, steps: 3 });
    expect(a).toBe(b);
  });

  it('differs by tenant, by type and by input', () => {
    expect(idempotencyHash(t('other'), 'demo.steps', { steps: 3 })).not.toBe(base);
    expect(idempotencyHash(t('acme'), 'demo.other', { steps: 3 })).not.toBe(base);
    expect(idempotencyHash(t('acme'), 'demo.steps', { steps: 4 })).not.toBe(base);
  });

  it('differs by explicit key', () => {
    const k1 = idempotencyHash(t('acme'), 'demo.steps', { steps: 3 }, 'k1');
    const k2 = idempotencyHash(t('acme'), 'demo.steps', { steps: 3 }, 'k2');
    expect(k1).toMatch(HEX64);
    expect(k1).not.toBe(k2);
    expect(k1).not.toBe(base);
  });

  it('with an explicit key ignores the input', () => {
    const a = idempotencyHash(t('acme'), 'demo.steps', { steps: 3 }, 'order-42');
    const b = idempotencyHash(t('acme'), 'demo.steps', { steps: 999, other: true }, 'order-42');
    expect(a).toBe(b);
  });

  it('still separates tenants and types for the same explicit key', () => {
    const a = idempotencyHash(t('acme'), 'demo.steps', {}, 'k');
    expect(idempotencyHash(t('globex'), 'demo.steps', {}, 'k')).not.toBe(a);
    expect(idempotencyHash(t('acme'), 'files.index', {}, 'k')).not.toBe(a);
  });

  it('cannot be confused by moving characters between tenant, type and key (length-prefixed parts)', () => {
    expect(idempotencyHash(t('ab'), 'c', {}, 'd')).not.toBe(idempotencyHash(t('a'), 'bc', {}, 'd'));
    expect(idempotencyHash(t('a'), 'b|c', {}, 'd')).not.toBe(idempotencyHash(t('a'), 'b', {}, 'c|d'));
    expect(idempotencyHash(t('a'), 'b', {}, '')).not.toBe(idempotencyHash(t('a'), 'b', {}));
  });

  it('a key that looks like canonical input does not collide with that input', () => {
    expect(idempotencyHash(t('a'), 'b', { x: 1 }, '{"x":1}')).not.toBe(idempotencyHash(t('a'), 'b', { x: 1 }));
  });

  it('propagates canonicalJson rejections for unhashable input without a key', () => {
    expect(() => idempotencyHash(t('a'), 'b', { n: Number.NaN })).toThrow(TypeError);
    // With an explicit key the input is not hashed at all.
    expect(idempotencyHash(t('a'), 'b', { n: Number.NaN }, 'k')).toMatch(HEX64);
  });
});

describe('requestHash', () => {
  it('is hex, deterministic, and ignores key order', () => {
    const a = requestHash('demo.steps', { steps: 3, stepMs: 5 });
    expect(a).toMatch(HEX64);
    expect(requestHash('demo.steps', { stepMs: 5, steps: 3 })).toBe(a);
  });

  it('differs by type and by input', () => {
    const a = requestHash('demo.steps', { steps: 3 });
    expect(requestHash('demo.other', { steps: 3 })).not.toBe(a);
    expect(requestHash('demo.steps', { steps: 4 })).not.toBe(a);
  });

  it('is not confused by moving characters between type and input', () => {
    expect(requestHash('a|1', 2)).not.toBe(requestHash('a', '1|2'));
  });
});
