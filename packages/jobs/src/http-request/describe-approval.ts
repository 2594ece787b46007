import type { ApprovalRequest } from '@stepwise/shared';
import { requestLabel } from './request-label.js';
import type { HttpRequestInput } from './schemas.js';

/** Characters of the body shown to the approver. */
export const BODY_PREVIEW_CHARS = 500;

// Top-level body fields whose values are likely credentials; the approver sees only that they are set.
const SECRET_FIELD = /pass|secret|token|api[-_]?key|auth|credential|private/i;

/**
 * What a person approving an unsafe write sees (DESIGN §7): the method and URL (query values
 * hidden), header names (values hidden: they are often credentials), and a preview of the body
 * with credential-like top-level fields masked.
 */
export function describeRequestApproval(input: HttpRequestInput, idempotencyKey: string): ApprovalRequest {
  const url = new URL(input.url);
  const parameters: Record<string, unknown> = {
    method: input.method,
    url: `${url.origin}${url.pathname}`,
    idempotencyKey,
  };
  const queryNames = [...new Set(url.searchParams.keys())];
  if (queryNames.length > 0) parameters['queryParameters'] = queryNames;
  if (input.headers) parameters['headerNames'] = Object.keys(input.headers);
  if (input.body !== undefined) parameters['bodyPreview'] = preview(input.body);
  if (input.statusUrl) parameters['statusUrl'] = requestLabel('GET', input.statusUrl).slice('GET '.length);
  return {
    action: requestLabel(input.method, input.url),
    parameters,
    impact:
      `Sends one ${input.method} request that may change data at ${url.host}. The endpoint is not known to deduplicate by ` +
      'Idempotency-Key, so Stepwise sends it at most once without asking and cannot undo it.',
  };
}

function preview(body: Exclude<HttpRequestInput['body'], undefined>): string {
  const masked =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? Object.fromEntries(Object.entries(body).map(([k, v]) => [k, SECRET_FIELD.test(k) ? '[redacted]' : v]))
      : body;
  const text = typeof masked === 'string' ? masked : JSON.stringify(masked);
  return text.length > BODY_PREVIEW_CHARS ? `${text.slice(0, BODY_PREVIEW_CHARS)}…` : text;
}
