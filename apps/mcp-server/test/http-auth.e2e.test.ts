import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { revokeApiKey } from '@stepwise/shared';
import type { Proc, TestDatabase } from '@stepwise/testing';
import { connectHttpClient, createTestDatabase, mintApiKey, sc, SERVER_MAIN, spawnNode, startTcpProxy, uniquePrefix } from '@stepwise/testing';

// The real server over HTTP with API keys and JWT resource-server mode at once: a local JWKS
// endpoint plays the authorization server.

const ISSUER = 'https://issuer.stepwise.test';
const AUDIENCE = 'stepwise-e2e';
const METADATA = '/.well-known/oauth-protected-resource';

let db: TestDatabase;
let server: Proc;
let url: string; // .../mcp
let base: string;
let jwks: Server;
let jwksHits = 0;
let signingKey: CryptoKey;
let strangerKey: CryptoKey;
let env: NodeJS.ProcessEnv;
const clients: Client[] = [];

async function client(token: string | null): Promise<Client> {
  const c = await connectHttpClient(url, 'http-auth-e2e', token);
  clients.push(c);
  return c;
}

function post(headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

async function jwt(claims: Record<string, unknown>, o: { key?: CryptoKey; kid?: string; iss?: string; aud?: string; exp?: number } = {}): Promise<string> {
  return new SignJWT({ tenant: 'local', scope: 'jobs:read jobs:write', ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: o.kid ?? 'k1' })
    .setIssuer(o.iss ?? ISSUER)
    .setAudience(o.aud ?? AUDIENCE)
    .setSubject(String(claims.sub ?? 'user-1'))
    .setIssuedAt()
    .setExpirationTime(o.exp ?? Math.floor(Date.now() / 1000) + 300)
    .sign(o.key ?? signingKey);
}

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  signingKey = pair.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  const publicJwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  jwks = createServer((req, res) => {
    jwksHits++;
    res.writeHead(req.url === '/jwks.json' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));

  db = await createTestDatabase('httpauth');
  env = {
    ...process.env,
    DATABASE_URL: db.url,
    STEPWISE_QUEUE_PREFIX: uniquePrefix('http-auth'),
    LOG_LEVEL: 'info',
    STEPWISE_HTTP_PORT: '0',
    STEPWISE_JWT_ISSUER: ISSUER,
    STEPWISE_JWT_AUDIENCE: AUDIENCE,
    STEPWISE_JWT_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
  };
  await mintApiKey(db); // a key exists, so this server mints no first-start key
  server = spawnNode(SERVER_MAIN, ['--http'], env);
  const ready = await server.waitFor((l) => l.msg === 'mcp server listening');
  url = String(ready.url);
  base = url.replace(/\/mcp$/, '');
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await server?.stop();
  await db?.drop();
  await new Promise<void>((resolve) => (jwks ? jwks.close(() => resolve()) : resolve()));
});

describe('API keys over HTTP', () => {
  it('no token: 401 with a bare Bearer challenge naming the resource metadata, and a JSON-RPC body', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}${METADATA}"`);
    const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string }; id: null };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
    expect(body.error.message).toMatch(/Authorization: Bearer/);
    // A non-Bearer scheme is no credential either.
    expect((await post({ authorization: 'Basic dXNlcjpwYXNz' })).status).toBe(401);
  });

  it('bad token: 401 with error="invalid_token"', async () => {
    const { token } = await mintApiKey(db, { name: 'bad-token' });
    for (const bad of ['nonsense', `${token.slice(0, -4)}AAAA`, 'sw_000000000000_00000000000000000000000000000000', 'Bearer ']) {
      const res = await post({ authorization: `Bearer ${bad}` });
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate') ?? '';
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).toContain(`resource_metadata="${base}${METADATA}"`);
      expect(((await res.json()) as { jsonrpc: string }).jsonrpc).toBe('2.0');
    }
    expect(server.lines.some((l) => JSON.stringify(l).includes(token))).toBe(false); // never logged
  });

  it('a valid key works, as its own principal', async () => {
    const { token } = await mintApiKey(db, { name: 'valid' });
    const c = await client(token);
    const started = await c.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: 'valid-key' } });
    expect(started.isError).toBeFalsy();
    const [row] = await db.sql<{ principal_id: string; tenant_id: string }[]>`select principal_id, tenant_id from jobs where id = ${sc(started as never).jobId}`;
    expect(row!.tenant_id).toBe('local');
    expect(row!.principal_id).toMatch(/^prn_/);
    const [key] = await db.sql<{ last_used_at: unknown }[]>`select k.last_used_at from api_keys k join principals p on p.id = k.principal_id where p.name = 'valid'`;
    expect(key!.last_used_at).not.toBeNull();
  });

  it('a key revoked mid-session fails on the very next call', async () => {
    const made = await mintApiKey(db, { name: 'revoked-mid-session' });
    const c = await client(made.token);
    expect((await c.callTool({ name: 'list_jobs', arguments: {} })).isError).toBeFalsy();
    await revokeApiKey(db.db, { idOrPrefix: made.key.id });
    await expect(c.callTool({ name: 'list_jobs', arguments: {} })).rejects.toMatchObject({ code: 401 });
  });

  it('an expired key gets 401, also one that expires during a session', async () => {
    const expired = await mintApiKey(db, { name: 'expired', expiresAt: new Date(Date.now() - 1000) });
    const res = await post({ authorization: `Bearer ${expired.token}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');

    const soon = await mintApiKey(db, { name: 'expires-soon', expiresAt: new Date(Date.now() + 60_000) });
    const c = await client(soon.token);
    expect((await c.callTool({ name: 'list_jobs', arguments: {} })).isError).toBeFalsy();
    await db.sql`update api_keys set expires_at = now() - interval '1 second' where id = ${soon.key.id}`;
    await expect(c.callTool({ name: 'list_jobs', arguments: {} })).rejects.toMatchObject({ code: 401 });
  });

  it('a key without jobs:write gets a forbidden tool error from start_job, whether the principal or the key lacks it', async () => {
    const readOnlyPrincipal = await mintApiKey(db, { name: 'reader', scopes: ['jobs:read'] });
    const narrowedKey = await mintApiKey(db, { name: 'narrowed', keyScopes: ['jobs:read'] });
    for (const { token } of [readOnlyPrincipal, narrowedKey]) {
      const c = await client(token);
      const r = await c.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 } } });
      expect(r.isError).toBe(true);
      expect(sc(r as never)).toMatchObject({ category: 'forbidden', code: 'forbidden', retryable: false });
      expect((await c.callTool({ name: 'list_jobs', arguments: {} })).isError).toBeFalsy(); // reading is allowed
    }
  });

  it('serves RFC 9728 protected resource metadata, at the root and under /mcp', async () => {
    for (const path of [METADATA, `${METADATA}/mcp`]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(await res.json()).toEqual({
        resource: `${base}/mcp`,
        authorization_servers: [ISSUER],
        bearer_methods_supported: ['header'],
        scopes_supported: ['jobs:read', 'jobs:write', 'jobs:cancel', 'jobs:approve', 'admin'],
        resource_name: 'Stepwise durable jobs',
      });
    }
  });
});

describe('when credentials cannot be checked', () => {
  it('Postgres unreachable: a tool call gets a retryable tool error, anything else 503 with Retry-After; nothing leaks', async () => {
    const { token } = await mintApiKey(db, { name: 'pg-down' });
    const pg = new URL(db.url);
    const proxy = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
    const proxied = new URL(db.url);
    proxied.port = String(proxy.port);
    const p = spawnNode(SERVER_MAIN, ['--http'], { ...env, DATABASE_URL: proxied.toString() });
    try {
      const u = String((await p.waitFor((l) => l.msg === 'mcp server listening')).url);
      const c = await connectHttpClient(u, 'pg-down', token);
      proxy.cut();
      const r = await c.callTool({ name: 'list_jobs', arguments: {} });
      expect(r.isError).toBe(true);
      expect(sc(r as never)).toMatchObject({ category: 'transient', retryable: true, code: 'postgres_unavailable' });
      const res = await fetch(u, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/cannot be checked right now/);
      proxy.restore();
      expect((await c.callTool({ name: 'list_jobs', arguments: {} })).isError).toBeFalsy();
      await c.close();
    } finally {
      await p.stop();
      await proxy.close();
    }
  });
});

describe('JWT resource-server mode', () => {
  it('a valid token works; claims map to tenant, subject and known scopes', async () => {
    const c = await client(await jwt({ sub: 'alice', tenant: 'acme', scope: 'jobs:read jobs:write' }));
    const started = await c.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: 'jwt-1' } });
    expect(started.isError).toBeFalsy();
    const [row] = await db.sql<{ principal_id: string; tenant_id: string }[]>`select principal_id, tenant_id from jobs where id = ${sc(started as never).jobId}`;
    expect(row).toEqual({ principal_id: 'alice', tenant_id: 'acme' });
    // Tenant from the claim: acme sees its own job and none of tenant local's.
    const listed = sc((await c.callTool({ name: 'list_jobs', arguments: {} })) as never).jobs as { jobId: string }[];
    expect(listed.map((j) => j.jobId)).toEqual([sc(started as never).jobId]);
    expect(jwksHits).toBeGreaterThan(0);
  });

  it('scopes the token lacks (or Stepwise does not know) are not granted', async () => {
    const c = await client(await jwt({ sub: 'bob', scope: 'jobs:read jobs:everything' }));
    const r = await c.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 } } });
    expect(sc(r as never)).toMatchObject({ category: 'forbidden' });
  });

  it('wrong audience, wrong issuer, expired, unknown signing key or no tenant claim: 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const bad = {
      audience: await jwt({}, { aud: 'someone-else' }),
      issuer: await jwt({}, { iss: 'https://evil.example' }),
      expired: await jwt({}, { exp: now - 120 }),
      stranger: await jwt({}, { key: strangerKey, kid: 'k2' }),
      strangerSameKid: await jwt({}, { key: strangerKey, kid: 'k1' }),
      noTenant: await jwt({ tenant: undefined }),
      badTenant: await jwt({ tenant: 'Not A Tenant!' }),
    };
    for (const [why, token] of Object.entries(bad)) {
      const res = await post({ authorization: `Bearer ${token}` });
      expect(res.status, why).toBe(401);
      expect(res.headers.get('www-authenticate'), why).toContain('error="invalid_token"');
    }
  });
});

describe('first start', () => {
  it('a loopback server with no keys mints one admin key, prints it once with a client config, and never again', async () => {
    const fresh = await createTestDatabase('firstkey');
    try {
      const e = { ...env, DATABASE_URL: fresh.url, STEPWISE_JWT_ISSUER: '', STEPWISE_JWT_AUDIENCE: '', STEPWISE_JWT_JWKS_URL: '' };
      const first = spawnNode(SERVER_MAIN, ['--http'], e);
      let token = '';
      let firstUrl = '';
      try {
        firstUrl = String((await first.waitFor((l) => l.msg === 'mcp server listening')).url);
        await first.waitFor((l) => l.msg === 'first api key created and printed');
        const text = first.lines.map((l) => String(l.msg)).join('\n');
        token = /Authorization: Bearer (sw_\S+)/.exec(text)?.[1] ?? '';
        expect(token).toMatch(/^sw_/);
        expect(text).toContain('"headers"');
        expect(text).toContain('shown only this once');
        const c = await connectHttpClient(firstUrl, 'first-start', token);
        const r = await c.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 } } });
        expect(r.isError).toBeFalsy();
        await c.close();
      } finally {
        await first.stop();
      }
      const second = spawnNode(SERVER_MAIN, ['--http'], e);
      try {
        await second.waitFor((l) => l.msg === 'mcp server listening');
        await new Promise((r) => setTimeout(r, 300));
        expect(second.lines.some((l) => String(l.msg).includes('sw_'))).toBe(false);
        const [n] = await fresh.sql<{ n: number }[]>`select count(*)::int as n from api_keys`;
        expect(n!.n).toBe(1);
      } finally {
        await second.stop();
      }
    } finally {
      await fresh.drop();
    }
  });

  it('STEPWISE_AUTH=none is refused when bound beyond loopback', async () => {
    const p = spawnNode(SERVER_MAIN, ['--http'], { ...env, STEPWISE_AUTH: 'none', STEPWISE_HTTP_HOST: '0.0.0.0' });
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.lines.map((l) => String(l.msg)).join('\n')).toMatch(/STEPWISE_AUTH: "none" is refused unless STEPWISE_HTTP_HOST is a loopback address/);
  });

  it('STEPWISE_AUTH=none on loopback warns loudly and acts as the local principal', async () => {
    const p = spawnNode(SERVER_MAIN, ['--http'], { ...env, STEPWISE_AUTH: 'none', STEPWISE_JWT_ISSUER: '', STEPWISE_JWT_AUDIENCE: '', STEPWISE_JWT_JWKS_URL: '' });
    try {
      const ready = await p.waitFor((l) => l.msg === 'mcp server listening');
      expect(p.lines.some((l) => l.level === 40 && String(l.msg).startsWith('AUTHENTICATION IS OFF'))).toBe(true);
      const c = await connectHttpClient(String(ready.url), 'no-auth', null);
      const r = await c.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1 }, idempotencyKey: 'no-auth' } });
      const [row] = await db.sql<{ principal_id: string }[]>`select principal_id from jobs where id = ${sc(r as never).jobId}`;
      expect(row!.principal_id).toBe('local-operator');
      await c.close();
    } finally {
      await p.stop();
    }
  });
});
