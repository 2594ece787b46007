import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createTestDatabase } from '../testing/index.js';
import type { TestDatabase } from '../testing/index.js';
import type { AuditRecord } from '../db/ops/append-audit.js';
import { AuditBuffer } from './audit-buffer.js';

let tdb: TestDatabase;
const log = pino({ level: process.env.AUDIT_TEST_LOG ?? 'silent' });

const rec = (i: number, tenantId = 'acme'): AuditRecord => ({
  tenantId,
  principalId: 'alice',
  action: 'get_job_status',
  outcome: 'success',
  requestId: `req_${i}`,
  argsRedacted: { i, note: 'nul\u0000gone' },
});

async function count(tenant: string): Promise<number> {
  const [r] = await tdb.sql<{ n: number }[]>`select count(*)::int as n from audit_events where tenant_id = ${tenant}`;
  return r?.n ?? 0;
}

beforeAll(async () => {
  tdb = await createTestDatabase('audit-buffer');
});
afterAll(async () => {
  await tdb?.drop();
});

describe('AuditBuffer', () => {
  it('batches rows and writes a partial batch after the interval', async () => {
    const b = new AuditBuffer(tdb.db, log, { maxBatch: 50, flushIntervalMs: 50 });
    for (let i = 0; i < 120; i++) await b.append(rec(i, 'batch'));
    await new Promise((r) => setTimeout(r, 300));
    expect(await count('batch')).toBe(120);
    await b.close();
  });

  it('applies backpressure instead of dropping, and close() flushes everything', async () => {
    const b = new AuditBuffer(tdb.db, log, { maxBatch: 10, maxPending: 10, flushIntervalMs: 10_000 });
    // 1,000 appends through a 10-row buffer: every one must land, none may be dropped.
    await Promise.all(Array.from({ length: 1000 }, (_, i) => b.append(rec(i, 'bp'))));
    expect(b.pending).toBeLessThanOrEqual(10);
    await b.close();
    expect(await count('bp')).toBe(1000);
    await expect(b.append(rec(0, 'bp'))).rejects.toThrow(/closed/);
  });

  it('keeps rows when an INSERT fails and writes them on retry', async () => {
    const broken = { execute: () => Promise.reject(new Error('down')) } as unknown as TestDatabase['db'];
    const b = new AuditBuffer(broken, log, { maxBatch: 5, flushIntervalMs: 10, retryDelayMs: 10 });
    await b.append(rec(1, 'retry'));
    await new Promise((r) => setTimeout(r, 50));
    expect(b.pending).toBe(1);
    // Same rows, a working database: swap it in (the test reaches into nothing else).
    (broken as unknown as { execute: unknown }).execute = (q: unknown) => tdb.db.execute(q as never);
    await b.close();
    expect(b.pending).toBe(0);
    expect(await count('retry')).toBe(1);
  });
});
