import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ErrorCategory } from '@stepwise/shared';
import { classifyError, errorFromHttpStatus, StepwiseError } from '@stepwise/shared';

/** A failed downstream call, classified for the retry policy. */
export interface ClassifiedCallError {
  error: StepwiseError;
  /**
   * The request may have reached the server and taken effect (connection lost or timed out
   * while waiting for the answer). An `unsafe` step must not be replayed blindly after this.
   */
  ambiguous: boolean;
  /** The connection should be dropped and opened again (dead, expired session, bad credential). */
  evict: boolean;
}

// Failures that happen before a request can reach the server.
const NEVER_DELIVERED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Maps what a downstream call threw to an error category (DESIGN §6), and says whether the call
 * may have taken effect. `sent` is whether the request was handed to the transport at all.
 */
export function classifyCallError(e: unknown, where: { server: string; tool: string }, sent: boolean): ClassifiedCallError {
  const at = `${where.tool} on MCP server "${where.server}"`;
  const details = { server: where.server, tool: where.tool };
  if (e instanceof StepwiseError) return { error: e, ambiguous: false, evict: e.category === 'unauthorized' };
  if (e instanceof McpError) {
    const cause = { cause: e, details: { ...details, mcpCode: e.code } };
    switch (e.code) {
      case ErrorCode.ConnectionClosed:
        return {
          error: new StepwiseError('downstream_connection_closed', 'transient', `The connection to MCP server "${where.server}" closed during ${where.tool}.`, cause),
          ambiguous: sent,
          evict: true,
        };
      case ErrorCode.RequestTimeout:
        return {
          error: new StepwiseError('downstream_timeout', 'timeout', `${at} did not answer in time.`, cause),
          ambiguous: sent,
          evict: false,
        };
      case ErrorCode.InvalidParams:
      case ErrorCode.InvalidRequest:
      case ErrorCode.ParseError:
        return { error: new StepwiseError('downstream_invalid_request', 'invalid_input', `${at} rejected the request: ${e.message}`, cause), ambiguous: false, evict: false };
      case ErrorCode.MethodNotFound:
        return { error: new StepwiseError('downstream_method_not_found', 'not_found', `${at}: ${e.message}`, cause), ambiguous: false, evict: false };
      default:
        // InternalError and server-defined codes: the server failed while handling the call.
        return { error: new StepwiseError('downstream_error', 'transient', `${at} failed: ${e.message}`, cause), ambiguous: sent, evict: false };
    }
  }
  if (e instanceof StreamableHTTPError && typeof e.code === 'number') {
    const status = e.code;
    const mapped = status >= 400 ? errorFromHttpStatus(status, `${at}`) : undefined;
    const error =
      mapped ??
      new StepwiseError('downstream_http_error', 'transient', `${at}: ${e.message}`, { cause: e, details: { ...details, status } });
    return { error: withDetails(error, details), ambiguous: sent && (status < 400 || status >= 500), evict: status === 401 || status === 404 || status < 0 };
  }
  const error = classifyError(e);
  const code = errorCode(e);
  const delivered = sent && !(code !== undefined && NEVER_DELIVERED.has(code)) && !/Not connected/.test(e instanceof Error ? e.message : '');
  return {
    error: withDetails(error, details),
    ambiguous: delivered && (error.category === 'transient' || error.category === 'timeout'),
    evict: error.category === 'transient',
  };
}

function errorCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

function withDetails(error: StepwiseError, details: Record<string, unknown>): StepwiseError {
  return new StepwiseError(error.code, error.category, error.message, {
    retryable: error.retryable,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    details: { ...details, ...error.details },
    cause: error.cause ?? error,
  });
}

// The first matching rule wins, so credentials beat "not found" in "token not found". Bare
// numbers are not trusted ("line 404"); only "HTTP 404" / "status: 404" count as statuses.
const http = (codes: string) => `(?:http|status)[\\s:=]*(?:${codes})\\b`;
const rule = (words: string, codes: string | null): RegExp => new RegExp(`\\b(?:${words})\\b${codes ? `|${http(codes)}` : ''}`, 'i');
const TOOL_ERROR_RULES: readonly [RegExp, ErrorCategory, string][] = [
  [
    rule('unauthori[sz]ed|unauthenticated|not authenticated|invalid[_ ]token|expired[_ ]token|token (?:has )?expired|token (?:was )?revoked|authentication (?:failed|required)|invalid credentials|bad credentials', '401'),
    'unauthorized',
    'downstream_unauthorized',
  ],
  [rule('forbidden|permission denied|access denied|not permitted|EACCES|EPERM|insufficient[_ ]scope', '403'), 'forbidden', 'downstream_forbidden'],
  [rule('rate[- ]?limit(?:ed)?|too many requests|quota exceeded', '429'), 'rate_limited', 'downstream_rate_limited'],
  [rule('timed? ?out|timeout|ETIMEDOUT|deadline exceeded', '408|504'), 'timeout', 'downstream_timeout'],
  [rule('temporarily|temporary|unavailable|try again|ECONNRESET|ECONNREFUSED|overloaded', '502|503'), 'transient', 'downstream_unavailable'],
  [rule('conflict|already exists|EEXIST', '409'), 'conflict', 'downstream_conflict'],
  [rule('not found|ENOENT|no such file|does not exist|unknown (?:tool|resource)', '404'), 'not_found', 'downstream_not_found'],
  [rule('invalid|validation|must (?:be|have)|is required|expected|32602', '400|422'), 'invalid_input', 'downstream_invalid_input'],
];

/**
 * Classifies a tool result with `isError: true` from its text content (issue #6: "classified from
 * their content where possible"). What matches nothing is `internal`: the tool ran and said no,
 * and repeating the same call is not expected to change that.
 */
export function classifyToolErrorResult(result: CallToolResult, where: { server: string; tool: string }): StepwiseError {
  const text = resultText(result).slice(0, 2000);
  const matched = TOOL_ERROR_RULES.find(([re]) => re.test(text));
  const [category, code] = matched ? [matched[1], matched[2]] : (['internal', 'downstream_tool_error'] as const);
  const summary = text.split('\n')[0]?.slice(0, 300) || 'no message';
  return new StepwiseError(code, category, `${where.tool} on MCP server "${where.server}" returned an error: ${summary}`, {
    details: { server: where.server, tool: where.tool, text },
  });
}

/** The text of a tool result's text content blocks, joined by newlines. */
export function resultText(result: Pick<CallToolResult, 'content'>): string {
  return (result.content ?? [])
    .flatMap((c) => (c.type === 'text' ? [c.text] : []))
    .join('\n');
}
