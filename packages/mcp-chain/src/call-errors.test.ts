import { describe, expect, it } from 'vitest';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { classifyCallError, classifyToolErrorResult } from './call-errors.js';

const where = { server: 'fs', tool: 'write_file' };
const result = (text: string) => ({ isError: true, content: [{ type: 'text' as const, text }] });

describe('classifyCallError', () => {
  it('a lost connection or a timeout after sending is ambiguous; before sending it is not', () => {
    expect(classifyCallError(new McpError(ErrorCode.ConnectionClosed, 'Connection closed'), where, true)).toMatchObject({
      error: { category: 'transient', code: 'downstream_connection_closed' },
      ambiguous: true,
      evict: true,
    });
    expect(classifyCallError(new McpError(ErrorCode.RequestTimeout, 'Request timed out'), where, true)).toMatchObject({
      error: { category: 'timeout', retryable: true },
      ambiguous: true,
    });
    expect(classifyCallError(new McpError(ErrorCode.RequestTimeout, 'Request timed out'), where, false).ambiguous).toBe(false);
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(classifyCallError(refused, where, true)).toMatchObject({ error: { category: 'transient' }, ambiguous: false });
  });

  it('maps JSON-RPC errors the server answered with', () => {
    expect(classifyCallError(new McpError(ErrorCode.InvalidParams, 'bad'), where, true)).toMatchObject({ error: { category: 'invalid_input' }, ambiguous: false });
    expect(classifyCallError(new McpError(ErrorCode.MethodNotFound, 'nope'), where, true)).toMatchObject({ error: { category: 'not_found' } });
    expect(classifyCallError(new McpError(ErrorCode.InternalError, 'boom'), where, true)).toMatchObject({ error: { category: 'transient' }, ambiguous: true });
  });

  it('maps HTTP statuses from the Streamable HTTP transport; 401 means re-authorization', () => {
    expect(classifyCallError(new StreamableHTTPError(401, 'Error POSTing to endpoint'), where, true)).toMatchObject({
      error: { category: 'unauthorized', details: { server: 'fs', tool: 'write_file', status: 401 } },
      ambiguous: false,
      evict: true,
    });
    expect(classifyCallError(new StreamableHTTPError(403, 'x'), where, true).error.category).toBe('forbidden');
    expect(classifyCallError(new StreamableHTTPError(429, 'x'), where, true).error.category).toBe('rate_limited');
    expect(classifyCallError(new StreamableHTTPError(502, 'x'), where, true)).toMatchObject({ error: { category: 'transient' }, ambiguous: true });
  });
});

describe('classifyToolErrorResult', () => {
  it.each([
    ['Error: token expired', 'unauthorized'],
    ['HTTP 401 from upstream', 'unauthorized'],
    ['Access denied - path outside allowed directories: /etc/passwd not in /tmp/x', 'forbidden'],
    ['Rate limit exceeded, slow down', 'rate_limited'],
    ['the operation timed out', 'timeout'],
    ['Service temporarily unavailable', 'transient'],
    ['ENOENT: no such file or directory, open /tmp/x/missing.txt', 'not_found'],
    ['MCP error -32602: Input validation error: Invalid arguments for tool write_file', 'invalid_input'],
    ['file already exists', 'conflict'],
    ['something odd at line 404', 'internal'],
  ])('%s → %s', (text, category) => {
    const e = classifyToolErrorResult(result(text), where);
    expect(e.category).toBe(category);
    expect(e.message).toContain('write_file on MCP server "fs" returned an error');
    expect(e.details).toMatchObject({ server: 'fs', tool: 'write_file', text });
  });
});
