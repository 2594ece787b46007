/**
 * Request headers a caller may not set. Host and Content-Length are derived by fetch from the URL
 * and the body; the hop-by-hop headers govern one connection, not the request (RFC 9110 §7.6.1),
 * and undici rejects or overrides most of them anyway; Expect makes undici throw; Idempotency-Key
 * is set by the step from ctx.idempotencyKey, the one value that makes replays safe.
 */
export const FORBIDDEN_REQUEST_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'idempotency-key',
]);

/** Most headers a request may carry. */
export const MAX_REQUEST_HEADERS = 64;
/** Longest header value, in characters. */
export const MAX_HEADER_VALUE_LENGTH = 8192;

// RFC 9110 §5.1 field-name = token.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// CR, LF and NUL would split or end the header line (request smuggling).
const BAD_VALUE_CHAR = /[\r\n\0]/;

/**
 * Why the header `name: value` cannot be sent, or undefined when it can. The answer names the
 * header but never quotes its value: values are often credentials.
 */
export function headerProblem(name: string, value: string): string | undefined {
  if (!TOKEN.test(name)) return `"${name.slice(0, 64)}" is not a valid header name`;
  const lower = name.toLowerCase();
  if (lower === 'idempotency-key') return 'Idempotency-Key is set by the job from its step key; do not pass it';
  if (lower === 'host' || lower === 'content-length') return `${name} is derived from the url and body; do not pass it`;
  if (FORBIDDEN_REQUEST_HEADERS.has(lower)) return `${name} is a hop-by-hop header and cannot be set`;
  if (value.length > MAX_HEADER_VALUE_LENGTH) return `the value of ${name} is longer than ${MAX_HEADER_VALUE_LENGTH} characters`;
  if (BAD_VALUE_CHAR.test(value)) return `the value of ${name} contains a line break or NUL`;
  return undefined;
}
