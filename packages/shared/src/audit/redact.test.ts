import { describe, expect, it } from 'vitest';
import { auditArgs, REDACTED, redact } from './redact.js';

describe('redact', () => {
  it('redacts secret-looking keys at any depth, case-insensitively', () => {
    const v = {
      type: 'x',
      input: { url: 'u', apiKey: 'k1', nested: [{ Password: 'p', ok: 1 }], headers: { Authorization: 'Bearer t', 'X-API-KEY': 'k2', Cookie: 'c' } },
      accessToken: 't',
      client_secret: 's',
      credentials: { user: 'a' },
    };
    expect(redact(v)).toEqual({
      type: 'x',
      input: { url: 'u', apiKey: REDACTED, nested: [{ Password: REDACTED, ok: 1 }], headers: { Authorization: REDACTED, 'X-API-KEY': REDACTED, Cookie: REDACTED } },
      accessToken: REDACTED,
      client_secret: REDACTED,
      credentials: REDACTED,
    });
  });

  it('redacts declared dotted paths, with * for any key or index, without mutating the value', () => {
    const v = { input: { account: { pin: '1234', name: 'n' }, rows: [{ ssn: 'a', k: 1 }, { ssn: 'b' }] } };
    const copy = structuredClone(v);
    expect(redact(v, ['input.account.pin', 'input.rows.*.ssn', 'input.missing.path'])).toEqual({
      input: { account: { pin: REDACTED, name: 'n' }, rows: [{ ssn: REDACTED, k: 1 }, { ssn: REDACTED }] },
    });
    expect(v).toEqual(copy);
  });

  it('passes scalars and null through', () => {
    expect(redact(null)).toBeNull();
    expect(redact('token')).toBe('token');
    expect(redact([1, 'a'])).toEqual([1, 'a']);
  });
});

describe('auditArgs', () => {
  it('makes strings storable in jsonb and bounds the size', () => {
    expect(auditArgs({ a: 'x\u0000y', b: '\ud800', c: '\ud83d\ude00', 'k\u0000': 1 })).toEqual({ a: 'x\ufffdy', b: '\ufffd', c: '\ud83d\ude00', 'k\ufffd': 1 });
    expect(auditArgs({ big: 'x'.repeat(100) }, [], 50)).toEqual({ truncated: true, bytes: 110 });
  });
});
