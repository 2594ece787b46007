import type { ReconcileResult, StepContext } from '@stepwise/shared';
import { StepwiseError } from '@stepwise/shared';
import { errorForResponse, isJsonContentType, toHttpResponse } from './classify-response.js';
import { fetchBounded } from './fetch-bounded.js';
import { requestLabel } from './request-label.js';
import type { HttpRequestInput, HttpResponse } from './schemas.js';

/**
 * Asks `statusUrl` whether an interrupted unsafe request took effect: GET with the caller's
 * headers and the same Idempotency-Key. 200 with a complete JSON body → done, and that response
 * is the step's output; 404 → not done, so the runner sends the request again.
 *
 * @throws the typed error for a 4xx/5xx other than 404 (e.g. 401 → unauthorized).
 * @throws StepwiseError `http_reconcile_unclear` (conflict, not retryable) for any other answer
 *   (202, a non-JSON 200…): guessing "not done" could apply the write twice, so a person decides.
 */
export async function reconcileRequest(
  input: HttpRequestInput,
  statusUrl: string,
  ctx: Pick<StepContext<unknown>, 'signal' | 'idempotencyKey' | 'log'>,
): Promise<ReconcileResult<HttpResponse>> {
  const label = requestLabel('GET', statusUrl);
  const res = await fetchBounded({
    method: 'GET',
    url: statusUrl,
    headers: { ...input.headers, 'Idempotency-Key': ctx.idempotencyKey },
    timeoutMs: input.timeoutMs,
    maxResponseBytes: input.maxResponseBytes,
    signal: ctx.signal,
  });
  ctx.log.info({ status: res.status }, 'http status url answered');
  if (res.status === 404) return { done: false };
  if (res.status === 200 && !res.truncated && isJsonContentType(res.headers.get('content-type'))) {
    const output = toHttpResponse(res);
    // toHttpResponse falls back to text when JSON does not parse; that is not a usable answer.
    if (typeof output.body !== 'string') return { done: true, output };
  }
  const error = errorForResponse(res, label);
  if (error) throw error;
  throw new StepwiseError(
    'http_reconcile_unclear',
    'conflict',
    `${label}: answered HTTP ${res.status}${res.status === 200 ? ' without a complete JSON body' : ''}, so it is unknown whether the ` +
      'interrupted request took effect. Check by hand before sending it again.',
    { retryable: false, details: { status: res.status } },
  );
}
