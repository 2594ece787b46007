import { errorFromHttpStatus, StepwiseError } from '@stepwise/shared';
import type { BoundedResponse } from './fetch-bounded.js';
import type { HttpResponse } from './schemas.js';
import { SAFE_RESPONSE_HEADERS } from './schemas.js';

/** Characters of an error response body kept in the error's details. */
export const BODY_EXCERPT_CHARS = 300;

const JSON_TYPE = /^[^;]*[/+]json\s*(;|$)/i;

/** True for application/json, application/problem+json and the like. */
export function isJsonContentType(contentType: string | null): boolean {
  return contentType !== null && JSON_TYPE.test(contentType);
}

/**
 * The typed error for a 4xx/5xx response, from errorFromHttpStatus (so the mapping lives in one
 * place), with a short excerpt of the body added to its details; undefined for 1xx–3xx.
 */
export function errorForResponse(res: BoundedResponse, label: string): StepwiseError | undefined {
  const error = errorFromHttpStatus(res.status, label, res.headers.get('retry-after'));
  if (!error) return undefined;
  const extra = { status: res.status, bodyExcerpt: excerpt(res.text) };
  // errorFromHttpStatus builds a fresh details object per call; extending it in place keeps the
  // error's own class (RateLimitedError, ConflictError, TransientError) and its retry data.
  if (error.details) {
    Object.assign(error.details, extra);
    return error;
  }
  return new StepwiseError(error.code, error.category, error.message, {
    retryable: error.retryable,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    details: extra,
  });
}

/** The result shape: status, the safe header subset, and the body parsed when it is complete JSON. */
export function toHttpResponse(res: BoundedResponse): HttpResponse {
  const headers: HttpResponse['headers'] = {};
  for (const name of SAFE_RESPONSE_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { status: res.status, headers, body: parseBody(res), truncated: res.truncated };
}

/** Parsed JSON when the body is complete JSON; otherwise the text (a server mislabelling text as JSON is not our failure). */
function parseBody(res: BoundedResponse): HttpResponse['body'] {
  if (res.truncated || res.text === '' || !isJsonContentType(res.headers.get('content-type'))) return res.text;
  try {
    return JSON.parse(res.text) as HttpResponse['body'];
  } catch {
    return res.text;
  }
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_EXCERPT_CHARS ? `${flat.slice(0, BODY_EXCERPT_CHARS)}…` : flat;
}
