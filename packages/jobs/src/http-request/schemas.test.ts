import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, HttpRequestInputSchema } from './schemas.js';

const URL_OK = 'https://api.example.com/v1/orders';
const SECRET = 'super-secret-value-42';

function issuesOf(raw: Record<string, unknown>): { path: string; message: string }[] {
  const r = HttpRequestInputSchema.safeParse(raw);
  if (r.success) throw new Error('expected the input to be rejected');
  return r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

describe('HttpRequestInputSchema', () => {
  it('fills the defaults', () => {
    expect(HttpRequestInputSchema.parse({ url: URL_OK })).toEqual({
      method: 'GET',
      url: URL_OK,
      honoursIdempotencyKey: false,
      timeoutMs: DEFAULT_TIMEOUT_MS,
      maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES,
    });
    expect(DEFAULT_TIMEOUT_MS).toBe(30_000);
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(1024 * 1024);
  });

  it('accepts a full write', () => {
    const input = HttpRequestInputSchema.parse({
      method: 'POST',
      url: URL_OK,
      headers: { Authorization: `Bearer ${SECRET}`, Accept: 'application/json' },
      body: { amount: 100 },
      statusUrl: 'http://127.0.0.1:8080/status',
      timeoutMs: 300_000,
      maxResponseBytes: 10,
    });
    expect(input.body).toEqual({ amount: 100 });
  });

  it.each(['Host', 'host', 'HOST', 'Content-Length', 'Transfer-Encoding', 'Connection', 'Keep-Alive', 'TE', 'Trailer', 'Upgrade', 'Proxy-Authorization', 'Expect', 'Idempotency-Key'])(
    'rejects the header %s without quoting its value',
    (name) => {
      const issues = issuesOf({ url: URL_OK, headers: { [name]: SECRET } });
      expect(issues).toHaveLength(1);
      expect(issues[0]?.path).toBe(`headers.${name}`);
      expect(JSON.stringify(issues)).not.toContain(SECRET);
    },
  );

  it('rejects malformed header names, line breaks in values and case-insensitive duplicates', () => {
    expect(issuesOf({ url: URL_OK, headers: { 'Bad Header': 'x' } })[0]?.message).toMatch(/not a valid header name/);
    const crlf = issuesOf({ url: URL_OK, headers: { 'X-Token': `${SECRET}\r\nX-Evil: 1` } });
    expect(crlf[0]?.message).toMatch(/line break/);
    expect(JSON.stringify(crlf)).not.toContain(SECRET);
    expect(issuesOf({ url: URL_OK, headers: { Accept: 'a', accept: 'b' } })[0]?.message).toMatch(/given twice/);
  });

  it('rejects non-http(s) and relative URLs, for url and statusUrl', () => {
    expect(issuesOf({ url: 'ftp://example.com/x' })[0]?.path).toBe('url');
    expect(issuesOf({ url: '/relative' })[0]?.path).toBe('url');
    expect(issuesOf({ url: URL_OK, method: 'POST', statusUrl: 'file:///etc/passwd' })[0]?.path).toBe('statusUrl');
  });

  it.each(['GET', 'HEAD'])('rejects a body on %s', (method) => {
    expect(issuesOf({ url: URL_OK, method, body: 'x' })[0]).toEqual({ path: 'body', message: expect.stringContaining('cannot have a body') });
  });

  it('enforces the timeout and size limits, unknown fields and methods', () => {
    expect(issuesOf({ url: URL_OK, timeoutMs: 300_001 })[0]?.path).toBe('timeoutMs');
    expect(issuesOf({ url: URL_OK, timeoutMs: 0 })[0]?.path).toBe('timeoutMs');
    expect(issuesOf({ url: URL_OK, maxResponseBytes: 0 })[0]?.path).toBe('maxResponseBytes');
    expect(issuesOf({ url: URL_OK, method: 'OPTIONS' })[0]?.path).toBe('method');
    expect(issuesOf({ url: URL_OK, retries: 3 })[0]?.message).toMatch(/retries/);
  });

  it('becomes a self-contained JSON Schema with descriptions (start_job embeds it, so no $ref)', () => {
    const schema = z.toJSONSchema(HttpRequestInputSchema, { io: 'input', unrepresentable: 'any' });
    const text = JSON.stringify(schema);
    expect(text).not.toContain('$ref');
    const properties = (schema as { properties: Record<string, { description?: string }> }).properties;
    for (const name of ['method', 'url', 'headers', 'body', 'honoursIdempotencyKey', 'statusUrl', 'timeoutMs', 'maxResponseBytes']) {
      expect(properties[name]?.description, name).toBeTruthy();
    }
  });
});
