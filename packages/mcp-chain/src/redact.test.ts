import { describe, expect, it } from 'vitest';
import { redactSecrets } from './redact.js';

describe('redactSecrets', () => {
  it('blanks secret-looking keys at any depth and keeps the rest', () => {
    expect(
      redactSecrets({
        path: '/a',
        apiKey: 'k',
        'api-key': 'k',
        nested: { Authorization: 'Bearer x', list: [{ password: 'p', ok: 1 }], refresh_token: 't' },
        clientSecret: 's',
      }),
    ).toEqual({
      path: '/a',
      apiKey: '[redacted]',
      'api-key': '[redacted]',
      nested: { Authorization: '[redacted]', list: [{ password: '[redacted]', ok: 1 }], refresh_token: '[redacted]' },
      clientSecret: '[redacted]',
    });
    expect(redactSecrets('plain')).toBe('plain');
  });
});
