/** Keys that look like secrets, at any depth (`apiKey`, `api_key`, `x-api-key`, `refreshToken`, …). */
const SECRET_KEY = /token|password|secret|authorization|api[-_]?key|cookie|credential/i;

/** What a redacted value is replaced with. */
export const REDACTED = '[redacted]';

/**
 * A copy of `value` safe to store in the audit log: every property whose key looks like a secret
 * (see SECRET_KEY, case-insensitive, at any depth) and every dotted path in `extraPaths`
 * (`input.auth.pin`; `*` matches any key or array index at that level) becomes "[redacted]".
 * Pure: `value` is never mutated. Cycles cannot occur (values come from JSON).
 */
export function redact(value: unknown, extraPaths: readonly string[] = []): unknown {
  const paths = extraPaths.map((p) => p.split('.').filter(Boolean)).filter((p) => p.length > 0);
  return walk(value, paths, 0);
}

/** Deeper than this, a copy keeps TOO_DEEP instead of recursing: hostile nesting must not overflow the stack. */
export const REDACT_MAX_DEPTH = 64;
export const TOO_DEEP = '[too deep]';

function walk(value: unknown, paths: readonly string[][], depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth >= REDACT_MAX_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) {
    return value.map((v, i) => (matchesHere(paths, String(i)) ? REDACTED : walk(v, descend(paths, String(i)), depth + 1)));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEY.test(k) || matchesHere(paths, k) ? REDACTED : walk(v, descend(paths, k), depth + 1);
  }
  return out;
}

/** A path of length 1 whose head matches `key` ends here: this key is redacted. */
function matchesHere(paths: readonly string[][], key: string): boolean {
  return paths.some((p) => p.length === 1 && (p[0] === key || p[0] === '*'));
}

function descend(paths: readonly string[][], key: string): string[][] {
  return paths.filter((p) => p.length > 1 && (p[0] === key || p[0] === '*')).map((p) => p.slice(1));
}

/** Redacted arguments larger than this (serialized) are stored as a size note; the digest still covers them. */
export const AUDIT_ARGS_MAX_BYTES = 16 * 1024;

/**
 * `redact(value, extraPaths)`, made storable in a jsonb column: NUL characters and lone UTF-16
 * surrogates (which Postgres refuses) become U+FFFD, and a result over `maxBytes` serialized
 * becomes `{ truncated: true, bytes }` so hostile inputs cannot bloat the audit log.
 */
export function auditArgs(value: unknown, extraPaths: readonly string[] = [], maxBytes = AUDIT_ARGS_MAX_BYTES): unknown {
  const safe = storable(redact(value, extraPaths));
  const bytes = Buffer.byteLength(JSON.stringify(safe) ?? 'null');
  return bytes > maxBytes ? { truncated: true, bytes } : safe;
}

// eslint-disable-next-line no-control-regex
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `value` with NUL characters and lone surrogates (which Postgres text and jsonb refuse) as U+FFFD. */
export function storable(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(UNSTORABLE, '\ufffd');
  if (Array.isArray(value)) return value.map(storable);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(UNSTORABLE, '\ufffd'), storable(v)]));
}
