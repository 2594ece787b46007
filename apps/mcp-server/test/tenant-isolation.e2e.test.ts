import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Stack } from '@stepwise/testing';
import { connectHttpClient, mintApiKey, sc, startStack } from '@stepwise/testing';

// Two tenants side by side over real HTTP against the running server: everything tenant B does
// to tenant A's job must look exactly like acting on an unknown id, and change nothing.

let stack: Stack;
let url: string;
let acme: Client; // tenant "local" (the stack's key)
let globex: Client; // tenant "globex"
let jobA: string; // acme's job, waiting for an approval
const UNKNOWN = 'job_00000000000000000000000000';

const call = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as CallToolResult;

/** An error payload with what legitimately differs (request id, the id itself) taken out. */
function shape(r: CallToolResult, id: string): Record<string, unknown> {
  expect(r.isError).toBe(true);
  const p = { ...sc(r) };
  delete p.requestId;
  const text = (r.content[0] as { text: string }).text.replaceAll(id, '<id>').replace(/req_\w+/g, '<req>');
  return { ...(JSON.parse(JSON.stringify(p).replaceAll(id, '<id>')) as Record<string, unknown>), text };
}

async function resourceError(c: Client, id: string): Promise<{ code: unknown; message: string }> {
  try {
    await c.readResource({ uri: `job://${id}` });
  } catch (e: unknown) {
    const err = e as { code?: unknown; message: string };
    return { code: err.code, message: err.message.replaceAll(id, '<id>') };
  }
  throw new Error('expected the read to fail');
}

beforeAll(async () => {
  stack = await startStack('http', { workers: 1 });
  url = String(stack.server!.lines.find((l) => l.msg === 'mcp server listening')!.url);
  acme = stack.client;
  const other = await mintApiKey(stack.db, { tenant: 'globex', name: 'intruder' });
  globex = await connectHttpClient(url, 'globex-client', other.token);
  const started = sc(await call(acme, 'start_job', { type: 'demo.steps', input: { steps: 2, approveAt: 1 }, idempotencyKey: 'iso-a' }));
  jobA = String(started.jobId);
  for (let i = 0; i < 6; i++) {
    const s = sc(await call(acme, 'get_job_status', { jobId: jobA, waitSeconds: 20 }));
    if (s.status === 'waiting') break;
  }
});

afterAll(async () => {
  await globex?.close().catch(() => undefined);
  await stack?.close();
});

describe('tenant isolation over HTTP', () => {
  const cases: [string, (id: string) => Record<string, unknown>][] = [
    ['get_job_status', (id) => ({ jobId: id })],
    ['get_job_status', (id) => ({ jobId: id, waitSeconds: 1 })],
    ['get_job_history', (id) => ({ jobId: id })],
    ['cancel_job', (id) => ({ jobId: id, reason: 'intrusion' })],
    ['respond_to_job', (id) => ({ jobId: id, decision: 'approve' })],
    ['retry_job', (id) => ({ jobId: id })],
  ];

  it.each(cases)('%s on another tenant\'s job answers exactly like an unknown id and changes nothing', async (tool, args) => {
    const before = await stack.counts();
    const [jobBefore] = await stack.db.sql`select status, version from jobs where id = ${jobA}`;
    const cross = await call(globex, tool, args(jobA));
    const unknown = await call(globex, tool, args(UNKNOWN));
    expect(shape(cross, jobA)).toEqual(shape(unknown, UNKNOWN));
    expect(sc(cross)).toMatchObject({ category: 'not_found', code: 'job_not_found' });
    expect(await stack.counts()).toEqual(before);
    expect((await stack.db.sql`select status, version from jobs where id = ${jobA}`)[0]).toEqual(jobBefore);
  });

  it('resources/read job:// of another tenant\'s job fails like an unknown id', async () => {
    expect(await resourceError(globex, jobA)).toEqual(await resourceError(globex, UNKNOWN));
    expect((await acme.readResource({ uri: `job://${jobA}` })).contents).toHaveLength(1);
  });

  it('list_jobs shows each tenant only its own jobs', async () => {
    const theirs = sc(await call(globex, 'list_jobs', { limit: 100 }));
    expect((theirs.jobs as { jobId: string }[]).map((j) => j.jobId)).not.toContain(jobA);
    const ours = sc(await call(acme, 'list_jobs', { limit: 100 }));
    expect((ours.jobs as { jobId: string }[]).map((j) => j.jobId)).toContain(jobA);
  });

  it('the same idempotency key in both tenants creates two jobs', async () => {
    const args = { type: 'demo.steps', input: { steps: 1, stepMs: 1 }, idempotencyKey: 'shared-key' };
    const a = sc(await call(acme, 'start_job', args));
    const b = sc(await call(globex, 'start_job', args));
    expect(a.deduplicated).toBe(false);
    expect(b.deduplicated).toBe(false);
    expect(a.jobId).not.toBe(b.jobId);
    const rows = await stack.db.sql<{ tenant_id: string }[]>`select tenant_id from jobs where idempotency_key = 'shared-key' order by tenant_id`;
    expect(rows.map((r) => r.tenant_id)).toEqual(['globex', 'local']);
  });

  it('audits the refused cross-tenant calls under the caller\'s tenant, and the owner\'s history omits them', async () => {
    await new Promise((r) => setTimeout(r, 600)); // the read/error audit buffer flushes every 250 ms
    const refused = await stack.db.sql<{ tenant_id: string; outcome: string; error_code: string; action: string }[]>`
      select tenant_id, outcome, error_code, action from audit_events where target_job_id = ${jobA} and tenant_id = 'globex'`;
    expect(refused.length).toBeGreaterThanOrEqual(cases.length);
    expect(refused.every((r) => r.outcome === 'error' && r.error_code === 'job_not_found')).toBe(true);
    const history = sc(await call(acme, 'get_job_history', { jobId: jobA, limit: 200 }));
    const entries = history.entries as { source: string; kind: string; actor: string | null; toStatus: string | null }[];
    expect(entries.filter((e) => e.source === 'event').map((e) => e.kind)).toContain('created');
    expect(entries.some((e) => e.source === 'audit' && e.kind === 'start_job')).toBe(true);
    expect(entries.some((e) => e.actor === 'intruder' || e.kind === 'cancel_job')).toBe(false);
  });
});
