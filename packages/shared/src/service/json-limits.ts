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
