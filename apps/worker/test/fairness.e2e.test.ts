import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '@stepwise/testing';
import { connectHttpClient, mintApiKey, sc, startStack } from '@stepwise/testing';

type Client = Awaited<ReturnType<typeof connectHttpClient>>;

// Issue #5 item 6: one tenant's flood must not starve another's jobs. BullMQ's queue is FIFO and
// its per-group fairness is a Pro feature, so the claim refuses a job while its tenant already
// runs STEPWISE_TENANT_MAX_RUNNING jobs; the refused dispatch steps aside and is retried.

describe('per-tenant fairness in dispatch', () => {
  let stack: Stack;
  let flood: Client;
  let small: Client;

  beforeAll(async () => {
    stack = await startStack('http', { workers: 1, env: { STEPWISE_WORKER_CONCURRENCY: '4', STEPWISE_TENANT_MAX_RUNNING: '2' } });
    const url = String((await stack.server!.waitFor((l) => l.msg === 'mcp server listening')).url);
    flood = await connectHttpClient(url, 'flood', (await mintApiKey(stack.db, { tenant: 'flood' })).token);
    small = await connectHttpClient(url, 'small', (await mintApiKey(stack.db, { tenant: 'small' })).token);
  });
  afterAll(async () => {
    await flood?.close();
    await small?.close();
    await stack?.close();
  });

  it('a tenant flooding the queue cannot take every worker slot; another tenant\'s later jobs finish first', async () => {
    const start = (c: Client, key: string) =>
      c.callTool({ name: 'start_job', arguments: { type: 'demo.steps', input: { steps: 1, stepMs: 250 }, idempotencyKey: key } });
    const floodIds = (await Promise.all(Array.from({ length: 40 }, (_, i) => start(flood, `flood-${i}`)))).map((r) => sc(r as never).jobId as string);
    const smallIds = (await Promise.all(Array.from({ length: 4 }, (_, i) => start(small, `small-${i}`)))).map((r) => sc(r as never).jobId as string);

    // Sample the flood tenant's running count while everything drains.
    let peakSeen = 0;
    for (let i = 0; i < 600; i++) {
      const [row] = await stack.db.sql<{ open: number; flood_running: number }[]>`
        select count(*) filter (where status not in ('succeeded', 'failed', 'cancelled'))::int as open,
               count(*) filter (where tenant_id = 'flood' and status = 'running')::int as flood_running
        from jobs`;
      peakSeen = Math.max(peakSeen, row!.flood_running);
      if (row!.open === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const rows = await stack.db.sql<{ tenant_id: string; status: string; finished_ms: number }[]>`
      select tenant_id, status, (extract(epoch from finished_at) * 1000)::float8 as finished_ms from jobs where id in ${stack.db.sql([...floodIds, ...smallIds])}`;
    expect(rows.every((r) => r.status === 'succeeded')).toBe(true);
    const lastSmall = Math.max(...rows.filter((r) => r.tenant_id === 'small').map((r) => r.finished_ms));
    const lastFlood = Math.max(...rows.filter((r) => r.tenant_id === 'flood').map((r) => r.finished_ms));
    // Ordering, not timing: FIFO alone would finish every flood job before any of the later ones.
    expect(lastSmall).toBeLessThan(lastFlood);
    // And the cap held: the flood tenant was never seen with more than 2 jobs running.
    expect(peakSeen).toBeGreaterThan(0);
    expect(peakSeen).toBeLessThanOrEqual(2);
  });
});
