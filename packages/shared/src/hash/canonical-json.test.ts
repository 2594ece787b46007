import { describe, it, expect } from 'vitest';
import { canonicalJson } from './canonical-json.js';

describe('canonicalJson', () => {
  it('encodes primitives like JSON', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(false)).toBe('false');
    expect(canonicalJson(0)).toBe('0');
    expect(canonicalJson(-1.5)).toBe('-1.5');
    expect(canonicalJson(1e21)).toBe('1e+21');
    expect(canonicalJson('a"b\\c\n')).toBe(JSON.stringify('a"b\\c\n'));
  });

  it('sorts object keys, so key order does not matter', () => {
    const a = canonicalJson({ b: 1, a: 2, c: 3 });
    const b = canonicalJson({ c: 3, a: 2, b: 1 });
    expect(a).toBe('{"a":2,"b":1,"c":3}');
    expect(b).toBe(a);
  });

  it('sorts keys at every level of nesting', () => {
    const x = { z: { y: 1, x: [{ b: 1, a: 2 }] }, a: { d: null, c: 'c' } };
    const y = { a: { c: 'c', d: null }, z: { x: [{ a: 2, b: 1 }], y: 1 } };
    expect(canonicalJson(x)).toBe('{"a":{"c":"c","d":null},"z":{"x":[{"a":2,"b":1}],"y":1}}');
    expect(canonicalJson(y)).toBe(canonicalJson(x));
  });

  it('sorts by code point, not locale (upper-case before lower-case, digits first)', () => {
    expect(canonicalJson({ b: 1, B: 2, '1': 3, a: 4 })).toBe('{"1":3,"B":2,"a":4,"b":1}');
  });

  it('keeps array order (arrays are ordered data)', () => {
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
  });

  it('drops undefined object members, as JSON.stringify does', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
    expect(canonicalJson({ a: 1, b: undefined })).toBe(canonicalJson({ a: 1 }));
    expect(canonicalJson({ nested: { x: undefined } })).toBe('{"nested":{}}');
  });

  it('writes undefined array slots as null, as JSON.stringify does', () => {
    expect(canonicalJson([1, undefined, 2])).toBe('[1,null,2]');
  });

  it('has no whitespace', () => {
    expect(canonicalJson({ a: [1, { b: 'x y' }] })).toBe('{"a":[1,{"b":"x y"}]}');
  });

  it('round-trips through JSON.parse to an equal value', () => {
    const v = { s: 'héllo', n: [1, 2.5, -3], o: { t: true, f: false, z: null } };
    expect(JSON.parse(canonicalJson(v))).toEqual(v);
  });

  it('handles unicode in keys and values, including astral characters', () => {
    const v = { 'ключ': 'значение', emoji: '🚀✓', '日本': '語', zwj: '👩‍💻' };
    const out = canonicalJson(v);
    expect(JSON.parse(out)).toEqual(v);
    expect(canonicalJson({ zwj: '👩‍💻', '日本': '語', emoji: '🚀✓', 'ключ': 'значение' })).toBe(out);
    // Distinct unicode strings stay distinct (precomposed é vs e + combining accent).
    expect(canonicalJson({ k: '\u00e9' })).not.toBe(canonicalJson({ k: 'e\u0301' }));
  });

  it('encodes dates as ISO strings', () => {
    expect(canonicalJson({ at: new Date('2024-01-02T03:04:05.678Z') })).toBe('{"at":"2024-01-02T03:04:05.678Z"}');
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
  ])('rejects %s, at the top and nested', (_name, n) => {
    expect(() => canonicalJson(n)).toThrow(TypeError);
    expect(() => canonicalJson({ a: [1, { b: n }] })).toThrow(TypeError);
  });

  it('rejects bigint', () => {
    expect(() => canonicalJson(10n)).toThrow(TypeError);
    expect(() => canonicalJson({ a: 10n })).toThrow(/bigint/);
  });

  it('rejects functions and symbols', () => {
    expect(() => canonicalJson(() => 1)).toThrow(TypeError);
    expect(() => canonicalJson(Symbol('s'))).toThrow(TypeError);
  });

  it('rejects cycles in objects and arrays', () => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = o;
    expect(() => canonicalJson(o)).toThrow(/cycle/);
    const arr: unknown[] = [1];
    arr.push(arr);
    expect(() => canonicalJson(arr)).toThrow(/cycle/);
    const deep: Record<string, unknown> = { x: { y: {} } };
    ((deep.x as Record<string, unknown>).y as Record<string, unknown>).back = deep;
    expect(() => canonicalJson(deep)).toThrow(TypeError);
  });

  it('accepts the same object twice when it is shared, not cyclic', () => {
    const shared = { v: 1 };
    expect(canonicalJson({ a: shared, b: shared, c: [shared, shared] })).toBe('{"a":{"v":1},"b":{"v":1},"c":[{"v":1},{"v":1}]}');
  });
});
