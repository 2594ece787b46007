import { describe, it, expect } from 'vitest';
import { checkJsonLimits } from './json-limits.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

function caught(fn: () => void): InvalidInputError {
  try {
    fn();
  } catch (e: unknown) {
    if (e instanceof InvalidInputError) return e;
    throw e;
  }
  throw new Error('expected InvalidInputError');
}

describe('checkJsonLimits', () => {
  it('accepts values within both limits', () => {
    expect(() => checkJsonLimits({ steps: 3, name: 'x', list: [1, 2, 3] }, 1024, 32, 'input')).not.toThrow();
    expect(() => checkJsonLimits(null, 4, 0, 'input')).not.toThrow();
    expect(() => checkJsonLimits(undefined, 4, 0, 'input')).not.toThrow();
    expect(() => checkJsonLimits('s', 3, 0, 'input')).not.toThrow();
  });

  it('accepts a value exactly at the byte limit and rejects one byte more', () => {
    const v = { k: 'x'.repeat(10) }; // {"k":"xxxxxxxxxx"} = 18 bytes
    expect(Buffer.byteLength(JSON.stringify(v))).toBe(18);
    expect(() => checkJsonLimits(v, 18, 32, 'input')).not.toThrow();
    const e = caught(() => checkJsonLimits(v, 17, 32, 'input'));
    expect(e.code).toBe('payload_too_large');
    expect(e.category).toBe('invalid_input');
    expect(e.retryable).toBe(false);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const v = 'é🚀'; // "é🚀" = 2 quotes + 2 + 4 bytes
    expect(() => checkJsonLimits(v, 8, 1, 'input')).not.toThrow();
    expect(caught(() => checkJsonLimits(v, 7, 1, 'input')).code).toBe('payload_too_large');
  });

  it('says how big the value is, what the limit is, and what to do instead', () => {
    const e = caught(() => checkJsonLimits({ blob: 'x'.repeat(2_000_000) }, 1_048_576, 32, 'input'));
    expect(e.message).toContain('input');
    expect(e.message).toContain('2,000,011 bytes');
    expect(e.message).toContain('1,048,576');
    expect(e.message).toMatch(/by reference/);
  });

  it('measures depth as nesting of objects and arrays', () => {
    expect(() => checkJsonLimits(nested(5), 1e6, 5, 'input')).not.toThrow();
    expect(caught(() => checkJsonLimits(nested(6), 1e6, 5, 'input')).code).toBe('payload_too_deep');
    expect(() => checkJsonLimits([[[1]]], 1e6, 3, 'input')).not.toThrow();
    expect(caught(() => checkJsonLimits([[[[1]]]], 1e6, 3, 'input')).code).toBe('payload_too_deep');
    expect(() => checkJsonLimits({}, 1e6, 1, 'input')).not.toThrow();
    expect(caught(() => checkJsonLimits({}, 1e6, 0, 'input')).code).toBe('payload_too_deep');
  });

  it('finds the deepest branch, not just the first one', () => {
    const v = { shallow: 1, list: [1, 2, { x: { y: { z: [1] } } }] };
    // root{} 1 → list[] 2 → {x} 3 → {y} 4 → {z} 5 → [1] 6
    expect(() => checkJsonLimits(v, 1e6, 6, 'input')).not.toThrow();
    expect(caught(() => checkJsonLimits(v, 1e6, 5, 'input')).code).toBe('payload_too_deep');
  });

  it('names the limit and the value in the depth message', () => {
    const e = caught(() => checkJsonLimits(nested(40), 1e6, 32, 'job input'));
    expect(e.message).toBe('The job input is nested more than 32 levels deep.');
  });

  it('checks depth before size, and a pathologically deep value does not overflow the stack', () => {
    let v: unknown = [];
    for (let i = 0; i < 200_000; i++) v = [v];
    const e = caught(() => checkJsonLimits(v, 10, 32, 'input'));
    expect(e.code).toBe('payload_too_deep');
  });

  it('rejects a cyclic value as too deep instead of crashing', () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    expect(caught(() => checkJsonLimits(o, 1e6, 32, 'input')).code).toBe('payload_too_deep');
  });
});
