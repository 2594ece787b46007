import { describe, expect, it } from 'vitest';
import { describeRequestApproval } from './describe-approval.js';
import { HttpRequestInputSchema } from './schemas.js';

describe('describeRequestApproval', () => {
  it('shows method, URL, header names and a masked body, never header or query values', () => {
    const input = HttpRequestInputSchema.parse({
      method: 'POST',
      url: 'https://api.example.com/v1/payments?token=query-secret&dry=1',
      headers: { Authorization: 'Bearer header-secret' },
      body: { amount: 100, currency: 'EUR', apiKey: 'body-secret' },
    });
    const request = describeRequestApproval(input, 'job_x:request:1');
    expect(request.action).toBe('POST https://api.example.com/v1/payments');
    expect(request.parameters).toEqual({
      method: 'POST',
      url: 'https://api.example.com/v1/payments',
      idempotencyKey: 'job_x:request:1',
      queryParameters: ['token', 'dry'],
      headerNames: ['Authorization'],
      bodyPreview: '{"amount":100,"currency":"EUR","apiKey":"[redacted]"}',
    });
    expect(request.impact).toMatch(/api\.example\.com/);
    const text = JSON.stringify(request);
    for (const secret of ['query-secret', 'header-secret', 'body-secret']) expect(text).not.toContain(secret);
  });

  it('cuts a long string body', () => {
    const input = HttpRequestInputSchema.parse({ method: 'PUT', url: 'https://api.example.com/doc', body: 'y'.repeat(2000) });
    expect(String(describeRequestApproval(input, 'k').parameters['bodyPreview'])).toHaveLength(501);
  });
});
