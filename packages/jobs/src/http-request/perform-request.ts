import type { StepContext } from '@stepwise/shared';
import { buildRequest } from './build-request.js';
import { errorForResponse, toHttpResponse } from './classify-response.js';
import { fetchBounded } from './fetch-bounded.js';
import { requestLabel } from './request-label.js';
import type { HttpRequestInput, HttpResponse } from './schemas.js';

/**
 * Sends the request once with `Idempotency-Key: ctx.idempotencyKey` and returns the response.
 * Only status, a few safe headers and the body are kept; header values are never logged.
 *
 * @throws the typed error from errorFromHttpStatus for a 4xx/5xx (details: status, bodyExcerpt).
 * @throws `ctx.signal.reason` when the step's signal fired; a timeout error after `timeoutMs`;
 *   fetch's own error on network failure (classifyError maps it to `transient`).
 */
export async function performRequest(input: HttpRequestInput, ctx: Pick<StepContext<unknown>, 'signal' | 'idempotencyKey' | 'log'>): Promise<HttpResponse> {
  const label = requestLabel(input.method, input.url);
  const parts = buildRequest(input, ctx.idempotencyKey);
  const res = await fetchBounded({
    method: input.method,
    url: input.url,
    ...parts,
    timeoutMs: input.timeoutMs,
    maxResponseBytes: input.maxResponseBytes,
    signal: ctx.signal,
  });
  ctx.log.info({ method: input.method, status: res.status, truncated: res.truncated }, 'http request answered');
  const error = errorForResponse(res, label);
  if (error) throw error;
  return toHttpResponse(res);
}
