import { defineJob } from '@stepwise/shared';
import type { StepDefinition } from '@stepwise/shared';
import { describeRequestApproval } from './describe-approval.js';
import { performRequest } from './perform-request.js';
import { reconcileRequest } from './reconcile-request.js';
import { HttpRequestInputSchema, HttpResponseSchema } from './schemas.js';
import type { HttpRequestInput, HttpResponse } from './schemas.js';
import { requestPolicy } from './step-policy.js';

/** The single step: its effect, approval, reconcile and retry follow from the input (see requestPolicy). */
function requestStep(input: HttpRequestInput): StepDefinition<HttpRequestInput, HttpResponse> {
  const policy = requestPolicy(input);
  const step: StepDefinition<HttpRequestInput, HttpResponse> = {
    name: 'request',
    effect: policy.effect,
    approval: policy.approval,
    timeoutMs: input.timeoutMs,
    output: HttpResponseSchema,
    run: (ctx) => performRequest(ctx.input, ctx),
  };
  if (policy.retry) step.retry = policy.retry;
  if (policy.approval === 'required') step.describeApproval = (ctx) => describeRequestApproval(ctx.input, ctx.idempotencyKey);
  const statusUrl = input.statusUrl;
  if (policy.reconcile && statusUrl !== undefined) step.reconcile = (ctx) => reconcileRequest(ctx.input, statusUrl, ctx);
  return step;
}

/**
 * `http.request`: one HTTP request carrying `Idempotency-Key: ctx.idempotencyKey`, with its
 * response classified into typed errors (DESIGN §6) and its replay safety declared from the input
 * (DESIGN §4): GET/HEAD `none`; writes `idempotent` when the endpoint honours the key, else
 * `unsafe` with approval required and, given statusUrl, a reconcile().
 */
export const httpRequest = defineJob({
  name: 'http.request',
  title: 'Send an HTTP request',
  description:
    'Sends one HTTP request (GET, HEAD, POST, PUT, PATCH or DELETE) from the worker to `url`, with an Idempotency-Key ' +
    'header that stays the same across retries and crash recovery of this job. Replay safety: GET and HEAD are read-only and ' +
    'retried freely. A write is retried with the same key only when `honoursIdempotencyKey` is true, i.e. the endpoint ' +
    'deduplicates by that header. Otherwise the write is unsafe: it requires a person\'s approval before it is sent, it is ' +
    'never retried automatically, and if the worker dies mid-request the job asks `statusUrl` (when given) whether it took ' +
    'effect, or else waits for a person to confirm. Errors: 429, or 503 with Retry-After → rate_limited (retry after ' +
    'retryAfterMs); 400/422 → invalid_input; 401 → unauthorized; 403 → forbidden; 404 → not_found; 409 → conflict; other ' +
    '5xx and network failures → transient; no answer within timeoutMs → timeout; error details hold the status and a ' +
    'short body excerpt. The result is {status, headers: {content-type?, etag?, location?, retry-after?}, body, truncated}: ' +
    'body is parsed JSON for a JSON response, otherwise text, and is cut at maxResponseBytes (then truncated is true).',
  input: HttpRequestInputSchema,
  output: HttpResponseSchema,
  steps: (input: HttpRequestInput) => [requestStep(input)],
});
