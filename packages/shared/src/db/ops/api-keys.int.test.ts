import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createTestDatabase } from '../../testing/index.js';
import type { TestDatabase } from '../../testing/index.js';
import type { TenantId } from '../../ids.js';
import { createPrincipal } from './create-principal.js';
import { createApiKey } from './create-api-key.js';
import { authenticateApiKey } from './authenticate-api-key.js';
import { revokeApiKey } from './revoke-api-key.js';
import { listApiKeys } from './list-api-keys.js';
import { createFirstApiKey } from './create-first-api-key.js';
import { parseApiKey } from '../../auth/api-key.js';

let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase('api-keys');
});
afterAll(async () => {
  await tdb?.drop();
});

const ACME = 'acme' as TenantId;
const GLOBEX = 'globex' as TenantId;
let n = 0;
const uniq = (s: string) => `${s}-${n++}`;

async function principal(scopes: Parameters<typeof createPrincipal>[1]['scopes'] = ['jobs:read', 'jobs:write'], tenantId = ACME) {
  return (await createPrincipal(tdb.db, { tenantId, name: uniq('bot'), scopes })).principal;
}
async function key(p: { id: string }, extra: Partial<Parameters<typeof createApiKey>[1]> = {}) {
  const created = await createApiKey(tdb.db, { principalId: p.id as never, name: 'k', scopes: null, expiresAt: null, ...extra });
  if (!created) throw new Error('key not created');
  return created;
}
async function lastUsed(id: string): Promise<Date | null> {
  const [row] = await tdb.sql<{ last_used_at: Date | string | null }[]>`select last_used_at from api_keys where id = ${id}`;
  return row!.last_used_at === null ? null : new Date(row!.last_used_at);
}

describe('createPrincipal', () => {
  it('creates once, then returns the existing row unchanged (scopes are never widened)', async () => {
    const name = uniq('ci');
    const a = await createPrincipal(tdb.db, { tenantId: ACME, name, scopes: ['jobs:read'] });
    expect(a.created).toBe(true);
    expect(a.principal).toMatchObject({ tenantId: ACME, name, scopes: ['jobs:read'], disabledAt: null });
    expect(a.principal.id).toMatch(/^prn_/);
    const b = await createPrincipal(tdb.db, { tenantId: ACME, name, scopes: ['admin'] });
    expect(b).toEqual({ principal: a.principal, created: false });
    const other = await createPrincipal(tdb.db, { tenantId: GLOBEX, name, scopes: ['jobs:read'] });
    expect(other.created).toBe(true);
    expect(other.principal.id).not.toBe(a.principal.id);
  });

  it('returns one principal to many concurrent creators', async () => {
    const name = uniq('race');
    const all = await Promise.all(Array.from({ length: 10 }, () => createPrincipal(tdb.db, { tenantId: ACME, name, scopes: ['jobs:read'] })));
    expect(new Set(all.map((r) => r.principal.id)).size).toBe(1);
    expect(all.filter((r) => r.created)).toHaveLength(1);
  });
});

describe('createApiKey + authenticateApiKey', () => {
  it('stores only sha256(secret); the token authenticates as the principal with its scopes', async () => {
    const p = await principal(['jobs:read', 'jobs:write']);
    const { key: k, token } = await key(p, { name: 'laptop' });
    expect(k).toMatchObject({ principalId: p.id, tenantId: ACME, name: 'laptop', scopes: null, revokedAt: null, lastUsedAt: null });
    expect(k.id).toMatch(/^key_/);
    expect(token.startsWith(`sw_${k.prefix}_`)).toBe(true);
    const [row] = await tdb.sql<Record<string, unknown>[]>`select * from api_keys where id = ${k.id}`;
    const secret = parseApiKey(token)!.secret;
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row!.hash).toMatch(/^[0-9a-f]{64}$/);

    const r = await authenticateApiKey(tdb.db, token);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.keyId).toBe(k.id);
    expect(r.principal.tenantId).toBe(ACME);
    expect(r.principal.principalId).toBe(p.id);
    expect([...r.principal.scopes].sort()).toEqual(['jobs:read', 'jobs:write']);
  });

  it('refuses a wrong secret, an unknown prefix and a malformed token alike', async () => {
    const { token } = await key(await principal());
    const { prefix, secret } = parseApiKey(token)!;
    const wrong = `sw_${prefix}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    expect(await authenticateApiKey(tdb.db, wrong)).toEqual({ ok: false, reason: 'unknown' });
    expect(await authenticateApiKey(tdb.db, `sw_000000000000_${secret}`)).toEqual({ ok: false, reason: 'unknown' });
    expect(await authenticateApiKey(tdb.db, 'Bearer nonsense')).toEqual({ ok: false, reason: 'malformed' });
  });

  it('narrows to key scopes ∩ principal scopes', async () => {
    const p = await principal(['jobs:read', 'jobs:write']);
    const { token } = await key(p, { scopes: ['jobs:read', 'jobs:cancel'] });
    const r = await authenticateApiKey(tdb.db, token);
    expect(r.ok && [...r.principal.scopes]).toEqual(['jobs:read']);
    const admin = await principal(['admin']);
    const { token: narrow } = await key(admin, { scopes: ['jobs:read'] });
    const a = await authenticateApiKey(tdb.db, narrow);
    expect(a.ok && [...a.principal.scopes]).toEqual(['jobs:read']);
  });

  it('refuses an expired key', async () => {
    const { key: k, token } = await key(await principal(), { expiresAt: new Date(Date.now() + 60_000) });
    expect((await authenticateApiKey(tdb.db, token)).ok).toBe(true);
    await tdb.sql`update api_keys set expires_at = now() - interval '1 second' where id = ${k.id}`;
    expect(await authenticateApiKey(tdb.db, token)).toEqual({ ok: false, reason: 'expired' });
    const { token: past } = await key(await principal(), { expiresAt: new Date(Date.now() - 1000) });
    expect(await authenticateApiKey(tdb.db, past)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses every key of a disabled principal, and creates no new ones for it', async () => {
    const p = await principal();
    const { token } = await key(p);
    await tdb.sql`update principals set disabled_at = now() where id = ${p.id}`;
    expect(await authenticateApiKey(tdb.db, token)).toEqual({ ok: false, reason: 'disabled' });
    expect(await createApiKey(tdb.db, { principalId: p.id, name: 'x', scopes: null, expiresAt: null })).toBeNull();
  });

  it('creates no key for an unknown principal or one in another tenant', async () => {
    expect(await createApiKey(tdb.db, { principalId: 'prn_nope' as never, name: 'x', scopes: null, expiresAt: null })).toBeNull();
    const p = await principal(['jobs:read'], GLOBEX);
    expect(await createApiKey(tdb.db, { principalId: p.id, tenantId: ACME, name: 'x', scopes: null, expiresAt: null })).toBeNull();
    expect(await createApiKey(tdb.db, { principalId: p.id, tenantId: GLOBEX, name: 'x', scopes: null, expiresAt: null })).not.toBeNull();
  });

  it('stamps last_used_at on success only, at most once a minute', async () => {
    const { key: k, token } = await key(await principal());
    const { prefix } = parseApiKey(token)!;
    await authenticateApiKey(tdb.db, `sw_${prefix}_${'x'.repeat(32)}`);
    expect(await lastUsed(k.id)).toBeNull();
    await authenticateApiKey(tdb.db, token);
    const first = await lastUsed(k.id);
    expect(first).toBeInstanceOf(Date);
    await authenticateApiKey(tdb.db, token);
    expect(await lastUsed(k.id)).toEqual(first);
    await tdb.sql`update api_keys set last_used_at = now() - interval '2 minutes' where id = ${k.id}`;
    const before = await lastUsed(k.id);
    await authenticateApiKey(tdb.db, token);
    expect((await lastUsed(k.id))!.getTime()).toBeGreaterThan(before!.getTime());
  });
});

describe('revokeApiKey', () => {
  it('revokes by id or prefix; the first revocation wins; a revoked key fails at once', async () => {
    const { key: k, token } = await key(await principal());
    const r1 = await revokeApiKey(tdb.db, { idOrPrefix: k.id });
    expect(r1?.changed).toBe(true);
    expect(r1?.key.revokedAt).toBeInstanceOf(Date);
    expect(await authenticateApiKey(tdb.db, token)).toEqual({ ok: false, reason: 'revoked' });
    const r2 = await revokeApiKey(tdb.db, { idOrPrefix: k.prefix });
    expect(r2).toEqual({ key: r1!.key, changed: false });
  });

  it('returns null for an unknown key or one of another tenant', async () => {
    expect(await revokeApiKey(tdb.db, { idOrPrefix: 'key_unknown' })).toBeNull();
    const { key: k, token } = await key(await principal(['jobs:read'], GLOBEX));
    expect(await revokeApiKey(tdb.db, { idOrPrefix: k.id, tenantId: ACME })).toBeNull();
    expect((await authenticateApiKey(tdb.db, token)).ok).toBe(true);
  });
});

describe('listApiKeys', () => {
  it('lists keys with their principal, filtered by tenant, without hashes', async () => {
    const p = await principal(['jobs:read'], 'initech' as TenantId);
    const { key: k } = await key(p, { name: 'listed' });
    const listed = await listApiKeys(tdb.db, { tenantId: 'initech' as TenantId });
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: k.id, principalName: p.name, name: 'listed', principalDisabledAt: null });
    expect(JSON.stringify(listed)).not.toMatch(/[0-9a-f]{64}/);
    const all = await listApiKeys(tdb.db);
    expect(all.length).toBeGreaterThan(listed.length);
    expect(new Set(all.map((x) => x.tenantId))).toContain(ACME);
  });
});

describe('createFirstApiKey', () => {
  let fresh: TestDatabase;
  beforeAll(async () => {
    fresh = await createTestDatabase('first-key');
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  it('mints exactly one key on an empty table, even when servers start at once; never again after', async () => {
    const args = { tenantId: 'local' as TenantId, principalName: 'local-admin', scopes: ['admin'] as const, keyName: 'first-start' };
    const results = await Promise.all(Array.from({ length: 5 }, () => createFirstApiKey(fresh.db, { ...args, scopes: [...args.scopes] })));
    const minted = results.filter((r) => r !== null);
    expect(minted).toHaveLength(1);
    const first = minted[0]!;
    expect(first.principal).toMatchObject({ tenantId: 'local', name: 'local-admin', scopes: ['admin'] });
    expect(first.key).toMatchObject({ principalId: first.principal.id, name: 'first-start', scopes: null });
    const auth = await authenticateApiKey(fresh.db, first.token);
    expect(auth.ok && [...auth.principal.scopes]).toEqual(['admin']);
    await revokeApiKey(fresh.db, { idOrPrefix: first.key.id });
    expect(await createFirstApiKey(fresh.db, { ...args, scopes: ['admin'] })).toBeNull();
    const [count] = await fresh.sql<{ n: number }[]>`select count(*)::int as n from api_keys`;
    expect(count!.n).toBe(1);
  });
});
