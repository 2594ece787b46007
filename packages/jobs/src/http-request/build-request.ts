import type { HttpRequestInput } from './schemas.js';

/** What goes on the wire besides method and URL. */
export interface RequestParts {
  headers: Record<string, string>;
  body?: string;
}

/**
 * The caller's headers plus `Idempotency-Key`, and the body as a string: strings as given, any
 * other JSON value serialised, with Content-Type application/json unless the caller set one.
 */
export function buildRequest(input: Pick<HttpRequestInput, 'headers' | 'body'>, idempotencyKey: string): RequestParts {
  const headers: Record<string, string> = { ...input.headers, 'Idempotency-Key': idempotencyKey };
  if (input.body === undefined) return { headers };
  if (typeof input.body === 'string') return { headers, body: input.body };
  const hasContentType = Object.keys(headers).some((n) => n.toLowerCase() === 'content-type');
  if (!hasContentType) headers['Content-Type'] = 'application/json';
  return { headers, body: JSON.stringify(input.body) };
}
