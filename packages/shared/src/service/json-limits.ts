import { InvalidInputError } from '../errors/invalid-input-error.js';

/**
 * Rejects values too large or too deeply nested to store and re-parse safely, before any other
 * work is done on them. Size is measured as serialized JSON bytes.
 * @throws InvalidInputError (code `payload_too_large` or `payload_too_deep`)
 */
export function checkJsonLimits(value: unknown, maxBytes: number, maxDepth: number, what: string): void {
  const depth = depthOf(value, 0, maxDepth);
  if (depth > maxDepth) {
    throw new InvalidInputError(`The ${what} is nested more than ${maxDepth} levels deep.`, [], 'payload_too_deep');
  }
  const bytes = Buffer.byteLength(JSON.stringify(value ?? null), 'utf8');
  if (bytes > maxBytes) {
    throw new InvalidInputError(
      `The ${what} is ${bytes.toLocaleString('en-US')} bytes; the limit is ${maxBytes.toLocaleString('en-US')}. Pass large data by reference (a path or URL) instead.`,
      [],
      'payload_too_large',
    );
  }
}

function depthOf(v: unknown, depth: number, limit: number): number {
  if (depth > limit || v === null || typeof v !== 'object') return depth;
  let max = depth + 1;
  for (const child of Array.isArray(v) ? v : Object.values(v)) {
    max = Math.max(max, depthOf(child, depth + 1, limit));
    if (max > limit) break;
  }
  return max;
}

// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Rejects strings (values or keys, at any depth) that Postgres text and jsonb columns cannot hold:
 * NUL characters and lone UTF-16 surrogates. Without this they reach the database and fail there
 * as an internal error. Iterative, so any nesting depth is safe to walk.
 * @throws InvalidInputError (code `invalid_characters`)
 */
export function checkStorableStrings(value: unknown, what: string): void {
  const stack: { v: unknown; path: string }[] = [{ v: value, path: '' }];
  while (stack.length > 0) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) fail(path || '(root)');
    } else if (Array.isArray(v)) {
      v.forEach((c, i) => stack.push({ v: c, path: path ? `${path}.${i}` : String(i) }));
    } else if (v !== null && typeof v === 'object') {
      for (const [k, c] of Object.entries(v)) {
        const p = path ? `${path}.${k}` : k;
        if (UNSTORABLE.test(k)) fail(`${path ? `${path}.` : ''}(a key)`);
        stack.push({ v: c, path: p });
      }
    }
  }
  function fail(path: string): never {
    throw new InvalidInputError(
      `Invalid ${what}: ${path} holds a NUL character or a lone UTF-16 surrogate, which cannot be stored; send valid Unicode text without \\u0000.`,
      [{ path, message: 'NUL character or lone surrogate' }],
      'invalid_characters',
    );
  }
}
