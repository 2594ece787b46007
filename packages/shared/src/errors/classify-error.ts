import { StepwiseError } from './stepwise-error.js';
import { TransientError } from './transient-error.js';
import { RateLimitedError } from './rate-limited-error.js';
import { InvalidInputError } from './invalid-input-error.js';
import { CancelledError } from './cancelled-error.js';
import { ConflictError } from './conflict-error.js';

// Network failures that say nothing about the request itself; the same call may succeed later.
const TRANSIENT_NETWORK_CODES = new Set([
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
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'CONNECTION_CLOSED', // postgres.js
  'CONNECTION_ENDED', // postgres.js
  'CONNECTION_DESTROYED', // postgres.js
  'CONNECT_TIMEOUT', // postgres.js
]);

/**
 * SQLSTATE classes a retry can fix: 08 connection exception, 53 insufficient resources,
 * 57 operator intervention (admin shutdown, crash recovery), plus serialization failure
 * and deadlock. Anything else from Postgres is a bug or bad data and retrying will not help.
 */
export function isTransientPostgresCode(sqlstate: string): boolean {
  return (
    sqlstate.startsWith('08') ||
    sqlstate.startsWith('53') ||
    sqlstate.startsWith('57') ||
    sqlstate === '40001' ||
    sqlstate === '40P01'
  );
}

function field(e: unknown, key: string): unknown {
  return typeof e === 'object' && e !== null ? (e as Record<string, unknown>)[key] : undefined;
}

/** True when `e` is a connection-level failure of Postgres, Redis or the network. */
export function isTransientInfrastructureError(e: unknown): boolean {
  const code = field(e, 'code');
  if (typeof code === 'string') {
    if (TRANSIENT_NETWORK_CODES.has(code)) return true;
    // postgres.js puts the SQLSTATE in `code` for server errors (5 chars).
    if (/^[0-9A-Z]{5}$/.test(code) && field(e, 'severity') !== undefined) return isTransientPostgresCode(code);
  }
  const message = e instanceof Error ? e.message : '';
  // ioredis reports a dead connection with these messages and no code.
  if (/Connection is closed|Stream isn't writeable|Reached the max retries per request limit/.test(message)) return true;
  const cause = field(e, 'cause');
  return cause !== undefined && cause !== e && isTransientInfrastructureError(cause);
}

/** Parse a `Retry-After` header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Map an HTTP response status to a typed error (issue #4 item 1). Returns undefined for 2xx/3xx. */
export function errorFromHttpStatus(status: number, context: string, retryAfter?: string | null): StepwiseError | undefined {
  if (status < 400) return undefined;
  const retryAfterMs = parseRetryAfter(retryAfter);
  const details = { status };
  if (status === 429 || (status === 503 && retryAfterMs !== undefined)) {
    return new RateLimitedError(`${context}: the server asked us to slow down (HTTP ${status}).`, retryAfterMs ?? 1000, { details });
  }
  if (status === 400 || status === 422) return new StepwiseError('http_invalid_input', 'invalid_input', `${context}: the server rejected the request (HTTP ${status}).`, { details });
  if (status === 401) return new StepwiseError('http_unauthorized', 'unauthorized', `${context}: credentials were missing or expired (HTTP 401).`, { details });
  if (status === 403) return new StepwiseError('http_forbidden', 'forbidden', `${context}: access is denied (HTTP 403).`, { details });
  if (status === 404) return new StepwiseError('http_not_found', 'not_found', `${context}: not found (HTTP 404).`, { details });
  if (status === 408) return new StepwiseError('http_timeout', 'timeout', `${context}: the server timed out (HTTP 408).`, { details });
  if (status === 409) return new ConflictError('http_conflict', `${context}: the request conflicts with the current state (HTTP 409).`, { details });
  if (status >= 500) return new TransientError(`${context}: server error (HTTP ${status}).`, { details }, 'http_server_error');
  return new StepwiseError('http_error', 'invalid_input', `${context}: request failed (HTTP ${status}).`, { details });
}

/**
 * The one place that turns anything thrown into a StepwiseError. DESIGN §6: an unknown throw
 * counts as transient, so the retry policy gives it the benefit of the doubt until attempts run out.
 */
export function classifyError(e: unknown): StepwiseError {
  if (e instanceof StepwiseError) return e;
  if (e instanceof Error && e.name === 'AbortError') {
    const reason = field(e, 'cause') ?? field(e, 'reason');
    if (reason instanceof StepwiseError) return reason;
    return new CancelledError();
  }
  if (e instanceof Error && e.name === 'ZodError') {
    const issues = field(e, 'issues');
    return InvalidInputError.fromZod('value', Array.isArray(issues) ? (issues as { path: PropertyKey[]; message: string }[]) : []);
  }
  const status = field(e, 'status') ?? field(e, 'statusCode');
  if (typeof status === 'number' && status >= 400 && status < 600) {
    const headers = field(e, 'headers');
    const retryAfter =
      headers instanceof Headers ? headers.get('retry-after') : typeof field(headers, 'retry-after') === 'string' ? (field(headers, 'retry-after') as string) : undefined;
    const mapped = errorFromHttpStatus(status, e instanceof Error ? e.message : 'HTTP request', retryAfter);
    if (mapped) return mapped;
  }
  const message = e instanceof Error ? e.message : String(e);
  if (isTransientInfrastructureError(e)) return new TransientError(message, { cause: e }, 'network_error');
  const sqlstate = field(e, 'code');
  if (typeof sqlstate === 'string' && /^[0-9A-Z]{5}$/.test(sqlstate) && field(e, 'severity') !== undefined) {
    // A Postgres error a retry cannot fix: a constraint (class 23) is a conflict, the rest are bugs.
    return sqlstate.startsWith('23')
      ? new ConflictError('db_constraint', message, { cause: e, details: { sqlstate } })
      : new StepwiseError('db_error', 'internal', message, { cause: e, details: { sqlstate } });
  }
  if (e instanceof Error && e.name === 'TimeoutError') return new StepwiseError('timeout', 'timeout', message, { cause: e });
  return new TransientError(message || 'unexpected error', { cause: e }, 'unexpected_error');
}
