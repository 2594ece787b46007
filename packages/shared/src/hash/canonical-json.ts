/**
 * Deterministic JSON: object keys sorted by code point, no whitespace, `undefined` members dropped.
 * Two inputs that mean the same thing hash the same, whatever order the client wrote the keys in.
 * @throws TypeError for values JSON cannot represent faithfully (non-finite numbers, bigint, cycles).
 */
export function canonicalJson(value: unknown): string {
  return write(value, new Set());
}

function write(value: unknown, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonicalJson: non-finite number');
      return JSON.stringify(value);
    case 'object': {
      if (seen.has(value)) throw new TypeError('canonicalJson: cycle');
      seen.add(value);
      let out: string;
      if (Array.isArray(value)) {
        out = `[${value.map((v) => (v === undefined ? 'null' : write(v, seen))).join(',')}]`;
      } else if (value instanceof Date) {
        out = JSON.stringify(value.toISOString());
      } else {
        const entries = Object.entries(value as Record<string, unknown>)
          .filter(([, v]) => v !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        out = `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${write(v, seen)}`).join(',')}}`;
      }
      seen.delete(value);
      return out;
    }
    default:
      throw new TypeError(`canonicalJson: cannot encode ${typeof value}`);
  }
}
