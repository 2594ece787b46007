import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorCategory, ErrorInfo, ToolError } from '@stepwise/shared';
import { InternalError, isTransientInfrastructureError, ServiceUnavailableError, StepwiseError } from '@stepwise/shared';

/** What an assistant should do next, per category; appended to every error's text. */
export const NEXT_STEP: Record<ErrorCategory, string> = {
  transient: 'Retry the same call (same idempotencyKey) after a short wait.',
  rate_limited: 'Wait retryAfterMs, then retry the same call.',
  timeout: 'Retry the same call; if it keeps timing out, ask for less at once.',
  invalid_input: 'Fix the arguments as the message says; retrying unchanged will fail again.',
  unauthorized: 'The credential is missing or expired; ask the user to re-authorize. Do not retry unchanged.',
  forbidden: 'The caller lacks permission; ask the user or an operator. Do not retry.',
  not_found: 'Check the id (list_jobs shows your jobs). Do not retry unchanged.',
  conflict: 'The request conflicts with the current state; read it (get_job_status) and decide again.',
  cancelled: 'The job was cancelled; start a new one if it is still needed.',
  internal: 'A server-side fault; report the requestId to an operator. Retrying is unlikely to help.',
};

/** The structured payload of every tool error. */
export function errorPayload(info: ErrorInfo, requestId: string): ToolError {
  return {
    code: info.code,
    category: info.category,
    retryable: info.retryable,
    retryAfterMs: info.retryAfterMs ?? null,
    message: info.message,
    ...(info.details ? { details: info.details } : {}),
    requestId,
  };
}

/** Anything thrown while serving a call, as the error the caller may see. Unknown throws are bugs. */
export function toStepwiseError(e: unknown, requestId: string): StepwiseError {
  if (e instanceof StepwiseError) return e;
  if (isTransientInfrastructureError(e)) return new ServiceUnavailableError('postgres', e);
  return new InternalError(`Unexpected server error (request ${requestId}).`, { cause: e });
}

/**
 * The ONE mapping from domain errors to MCP tool results (`isError: true` plus structured
 * `{code, category, retryable, retryAfterMs, message}`). Nothing else builds error results.
 */
export function toToolError(e: unknown, requestId: string): CallToolResult {
  const info = toStepwiseError(e, requestId).toInfo();
  const when = info.retryable ? (info.retryAfterMs ? ` Retry after ${info.retryAfterMs} ms.` : ' Retryable.') : ' Not retryable.';
  return {
    isError: true,
    content: [{ type: 'text', text: `Error (${info.category}/${info.code}): ${info.message}${when} ${NEXT_STEP[info.category]}` }],
    structuredContent: errorPayload(info, requestId),
  };
}

export function toToolSuccess(structured: Record<string, unknown>, text: string, extra: CallToolResult['content'] = []): CallToolResult {
  return { content: [{ type: 'text', text }, ...extra], structuredContent: structured };
}
