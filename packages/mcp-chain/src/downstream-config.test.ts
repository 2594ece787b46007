import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DOWNSTREAM_ENV_SHAPE, DownstreamConfigSchema, mergeDownstreamConfigs } from './downstream-config.js';

const Env = z.object(DOWNSTREAM_ENV_SHAPE);
const messages = (r: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  (r.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepwise-dcfg-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('downstream servers config', () => {
  it('parses inline JSON and a file, with defaults, and merges them (inline wins per name)', async () => {
    const file = join(dir, 'servers.json');
    await writeFile(file, JSON.stringify({ servers: { fs: { stdio: { command: 'npx', args: ['-y', 'x'] } }, api: { http: { url: 'https://a.example/mcp' } } } }));
    const env = Env.parse({
      STEPWISE_MCP_SERVERS_FILE: file,
      STEPWISE_MCP_SERVERS: JSON.stringify({ servers: { api: { http: { url: 'https://b.example/mcp' }, auth: { bearerTokenEnv: 'API_TOKEN' }, approval: 'always' } } }),
    });
    const merged = mergeDownstreamConfigs(env.STEPWISE_MCP_SERVERS_FILE, env.STEPWISE_MCP_SERVERS);
    expect(merged.servers.fs).toEqual({ stdio: { command: 'npx', args: ['-y', 'x'] }, approval: 'default', callTimeoutMs: 60_000, tools: {} });
    expect(merged.servers.api).toMatchObject({ http: { url: 'https://b.example/mcp' }, auth: { bearerTokenEnv: 'API_TOKEN' }, approval: 'always' });
    expect(Env.parse({})).toEqual({});
    expect(mergeDownstreamConfigs(undefined, undefined)).toEqual({ servers: {} });
  });

  it('says why a config is refused: JSON, file, transport, credentials in plain sight', () => {
    expect(messages(Env.safeParse({ STEPWISE_MCP_SERVERS: '{nope' }))[0]).toMatch(/^STEPWISE_MCP_SERVERS: not valid JSON/);
    expect(messages(Env.safeParse({ STEPWISE_MCP_SERVERS_FILE: join(dir, 'missing.json') }))[0]).toMatch(/^STEPWISE_MCP_SERVERS_FILE: cannot read .*missing\.json/);
    const bad = messages(
      Env.safeParse({
        STEPWISE_MCP_SERVERS: JSON.stringify({
          servers: {
            both: { stdio: { command: 'x' }, http: { url: 'http://h/mcp' } },
            leaky: { http: { url: 'http://h/mcp', headers: { Authorization: 'Bearer abc' } } },
            'bad.name': { stdio: { command: 'x' } },
            twoauth: { http: { url: 'http://h/mcp' }, auth: { bearerTokenEnv: 'A', bearerTokenFile: '/f' } },
            stdioauth: { stdio: { command: 'x' }, auth: { bearerTokenEnv: 'A' } },
          },
        }),
      }),
    );
    expect(bad.join('\n')).toContain('servers.both: give exactly one of stdio or http');
    expect(bad.join('\n')).toContain('servers.leaky.http.headers: credentials must not be written into config');
    expect(bad.join('\n')).toContain('servers.bad.name: server names are letters');
    expect(bad.join('\n')).toContain('servers.twoauth.auth: give exactly one of bearerTokenEnv or bearerTokenFile');
    expect(bad.join('\n')).toContain('servers.stdioauth.auth: auth applies to http servers');
  });

  it('accepts per-tool overrides of effect and approval only', () => {
    expect(DownstreamConfigSchema.safeParse({ servers: { s: { stdio: { command: 'x' }, tools: { t: { effect: 'idempotent', approval: 'none' } } } } }).success).toBe(true);
    expect(DownstreamConfigSchema.safeParse({ servers: { s: { stdio: { command: 'x' }, tools: { t: { effect: 'maybe' } } } } }).success).toBe(false);
  });
});
