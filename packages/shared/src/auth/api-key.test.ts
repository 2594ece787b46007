import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { generateApiKey, hashApiKeySecret, looksLikeApiKey, parseApiKey, verifyApiKeySecret } from './api-key.js';
import { ApiKeyIdSchema, newApiKeyId, newPrincipalId } from './auth-ids.js';
import { effectiveScopes, knownScopes } from './principal-record.js';
import type { Scope } from './principal.js';

const TOKEN = /^sw_[0-9a-hjkmnp-tv-z]{12}_[0-9A-Za-z]{32}$/;

describe('generateApiKey', () => {
  it('mints sw_<12 base32>_<32 base62> with the prefix as lookup id and sha256(secret) as hash', () => {
    const k = generateApiKey();
    expect(k.token).toMatch(TOKEN);
    const parts = parseApiKey(k.token)!;
    expect(parts.prefix).toBe(k.prefix);
    expect(k.token).toBe(`sw_${parts.prefix}_${parts.secret}`);
    expect(k.hash).toBe(createHash('sha256').update(parts.secret).digest('hex'));
    expect(k.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(k.token).not.toContain(k.hash);
  });

  it('never repeats a prefix or a secret across many keys, and uses the whole alphabet', () => {
    const keys = Array.from({ length: 2000 }, () => generateApiKey());
    expect(new Set(keys.map((k) => k.prefix)).size).toBe(keys.length);
    expect(new Set(keys.map((k) => parseApiKey(k.token)!.secret)).size).toBe(keys.length);
    const secretChars = new Set(keys.flatMap((k) => [...parseApiKey(k.token)!.secret]));
    expect(secretChars.size).toBe(62);
  });
});

describe('parseApiKey / looksLikeApiKey', () => {
  it('refuses anything that is not exactly a Stepwise key', () => {
    const { token } = generateApiKey();
    for (const bad of ['', 'sw_', token.slice(0, -1), `${token}x`, token.replace('sw_', 'sk_'), `Bearer ${token}`, token.toUpperCase(), 'eyJhbGciOi.x.y']) {
      expect(parseApiKey(bad)).toBeNull();
      expect(looksLikeApiKey(bad)).toBe(false);
    }
    expect(looksLikeApiKey(token)).toBe(true);
  });
});

describe('verifyApiKeySecret', () => {
  it('accepts the right secret and refuses a wrong one, a malformed hash or an empty one', () => {
    const { token, hash } = generateApiKey();
    const { secret } = parseApiKey(token)!;
    expect(verifyApiKeySecret(secret, hash)).toBe(true);
    expect(verifyApiKeySecret(secret.slice(0, -1) + (secret.endsWith('a') ? 'b' : 'a'), hash)).toBe(false);
    expect(verifyApiKeySecret(secret, hash.slice(0, 62))).toBe(false);
    expect(verifyApiKeySecret(secret, '')).toBe(false);
    expect(verifyApiKeySecret(secret, 'not hex at all')).toBe(false);
    expect(hashApiKeySecret(secret)).toBe(hash);
  });
});

describe('auth ids', () => {
  it('are key_/prn_ plus a 26-char base32 body without ":"', () => {
    const k = newApiKeyId();
    expect(k).toMatch(/^key_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(ApiKeyIdSchema.parse(k)).toBe(k);
    expect(ApiKeyIdSchema.safeParse('job_0000000000000000000000000').success).toBe(false);
    expect(newPrincipalId()).toMatch(/^prn_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(newApiKeyId()).not.toBe(k);
  });
});

describe('effectiveScopes', () => {
  const s = (...x: Scope[]) => x;
  it('is the principal\'s scopes when the key has none', () => {
    expect([...effectiveScopes(s('jobs:read', 'jobs:write'), null)]).toEqual(['jobs:read', 'jobs:write']);
  });
  it('is the intersection when the key has scopes', () => {
    expect([...effectiveScopes(s('jobs:read', 'jobs:write'), s('jobs:read', 'jobs:cancel'))]).toEqual(['jobs:read']);
    expect([...effectiveScopes(s('jobs:read'), s())]).toEqual([]);
  });
  it('treats admin on either side as every scope, never widening past the other side', () => {
    expect([...effectiveScopes(s('admin'), s('jobs:read'))]).toEqual(['jobs:read']);
    expect([...effectiveScopes(s('jobs:read'), s('admin'))]).toEqual(['jobs:read']);
    expect([...effectiveScopes(s('admin'), s('admin'))]).toEqual(['admin']);
  });
  it('drops scopes this build does not know', () => {
    expect(knownScopes(['jobs:read', 'jobs:fly', 'jobtype:demo.steps', 'jobs:read'])).toEqual(['jobs:read', 'jobtype:demo.steps']);
  });
});
