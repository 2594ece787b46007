import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EffectServer, Proc, Stack } from '@stepwise/testing';
import { sc, startEffectServer, startStack } from '@stepwise/testing';

// The chaos suite (issue #3): real worker processes killed, paused, and their stores pulled out
// from under them. Every scenario counts side effects at an external endpoint that honours
// idempotency keys and asserts each step's effect applied exactly once. No timing assertions:
// only bounded waits for outcomes.

const LEASE_MS = 1500;
// Quotas raised: the scenarios start hundreds of jobs a minute as one principal on purpose.
const ENV = {
  STEPWISE_LEASE_MS: String(LEASE_MS),
  STEPWISE_SWEEP_INTERVAL_MS: '500',
  STEPWISE_WORKER_CONCURRENCY: '8',
  STEPWISE_QUOTA_STARTS_PER_MINUTE: '100000',
  STEPWISE_QUOTA_MAX_ACTIVE_JOBS: '100000',
};

async function startJobs(stack: Stack, n: number, input: Record<string, unknown>, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, (_, k) =>
        stack.call('start_job', { type: 'demo.steps', input, idempotencyKey: `${tag}-${i + k}` }),
      ),
    );
    for (const r of batch) {
      expect(r.isError).toBeFalsy();
      ids.push(sc(r).jobId as string);
    }
  }
  return ids;
}

/** Waits (bounded) until none of `ids` is left unfinished; returns the status counts. */
async function settle(stack: Stack, ids: string[], limitMs: number): Promise<Record<string, number>> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    let rows: { status: string; n: number }[];
    try {
      rows = await stack.db.sql<{ status: string; n: number }[]>`
        select status, count(*)::int as n from jobs where id in ${stack.db.sql(ids)} group by status`;
    } catch (e: unknown) {
      // Our own connection dies too when a scenario restarts Postgres; ask again.
      if (Date.now() > deadline) throw e;
      await sleep(250);
      continue;
    }
    const counts = Object.fromEntries(rows.map((r) => [r.status, r.n]));
    const open = (counts.pending ?? 0) + (counts.running ?? 0) + (counts.retrying ?? 0);
    if (open === 0 || Date.now() > deadline) return counts;
    await sleep(250);
  }
}

function expectEachEffectOnce(effects: EffectServer, ids: string[], steps: number): void {
  const wrong: string[] = [];
  for (const id of ids) {
    for (let s = 1; s <= steps; s++) {
      const key = `${id}:step-${String(s).padStart(3, '0')}:1`;
      if (effects.get(key).applied !== 1) wrong.push(`${key}=${effects.get(key).applied}`);
    }
  }
  expect(wrong).toEqual([]);
}

describe('chaos', () => {
  let stack: Stack;
  let effects: EffectServer;

  beforeAll(async () => {
    stack = await startStack('stdio', { workers: 0, env: ENV });
    effects = await startEffectServer({ dedupe: true });
  });
  afterEach(async () => {
    await Promise.all(stack.workers.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await stack?.close();
    await effects?.close();
  });

  it('4 workers race over 500 jobs while a killer loop SIGKILLs random workers: all succeed, each effect once', async () => {
    const live: Proc[] = [];
    for (let i = 0; i < 4; i++) live.push(await stack.startWorker());
    const ids = await startJobs(stack, 500, { steps: 3, stepMs: 30, effect: 'idempotent', effectUrl: effects.url }, 'race');

    // The killer: at most 8 kills, one every 0.7-1.5 s, each followed by a replacement worker.
    let kills = 0;
    const killer = (async () => {
      const stopAt = Date.now() + 20_000;
      while (kills < 8 && Date.now() < stopAt) {
        await sleep(700 + Math.random() * 800);
        const victim = live.splice(Math.floor(Math.random() * live.length), 1)[0];
        if (!victim) break;
        victim.child.kill('SIGKILL');
        await victim.exited;
        kills++;
        live.push(await stack.startWorker());
      }
    })();
    await killer;
    const counts = await settle(stack, ids, 120_000);
    expect(kills).toBeGreaterThan(0);
    expect(counts).toEqual({ succeeded: 500 });
    expectEachEffectOnce(effects, ids, 3);
  });

  it('redis-cli FLUSHALL mid-run: every job still finishes, none twice', async () => {
    await stack.startWorker();
    await stack.startWorker();
    const ids = await startJobs(stack, 100, { steps: 3, stepMs: 150, effect: 'idempotent', effectUrl: effects.url }, 'flush');
    await sleep(800);
    execFileSync('redis-cli', ['-u', String(stack.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), 'FLUSHALL']);
    const counts = await settle(stack, ids, 120_000);
    expect(counts).toEqual({ succeeded: 100 });
    expectEachEffectOnce(effects, ids, 3);
  });

  it('a Postgres restart mid-run: workers survive and all jobs finish', async () => {
    const workers = [await stack.startWorker(), await stack.startWorker()];
    const ids = await startJobs(stack, 60, { steps: 3, stepMs: 200, effect: 'idempotent', effectUrl: effects.url }, 'pgrestart');
    await sleep(700);
    const cluster = readdirSync('/etc/postgresql')[0]!;
    execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', cluster, 'main', 'restart', '-m', 'fast'], { stdio: 'ignore' });
    const counts = await settle(stack, ids, 120_000);
    // On failure, say why: the jobs that did not succeed and what the workers last logged.
    const why = async () => {
      const bad = await stack.db.sql`select id, status, error, current_step from jobs where id in ${stack.db.sql(ids)} and status <> 'succeeded' limit 5`;
      return JSON.stringify({ bad, workers: workers.map((w) => ({ exit: w.child.exitCode, last: w.lines.slice(-8) })) });
    };
    if (counts.succeeded !== 60) expect(counts, await why()).toEqual({ succeeded: 60 });
    expectEachEffectOnce(effects, ids, 3);
    for (const w of workers) expect(w.child.exitCode, await why()).toBeNull(); // survived
  });

  it('a zombie worker (SIGSTOP past its lease, then SIGCONT) is fenced out: its writes fail, effects count once', async () => {
    const zombie = await stack.startWorker();
    const [jobId] = await startJobs(stack, 1, { steps: 2, stepMs: 4000, effect: 'idempotent', effectUrl: effects.url }, 'zombie');
    const owner = async () =>
      (await stack.db.sql<{ lease_owner: string | null; lease_fence: number }[]>`select lease_owner, lease_fence from jobs where id = ${jobId!}`)[0]!;
    for (let i = 0; i < 100 && (await owner()).lease_owner === null; i++) await sleep(100);
    const before = await owner();
    expect(before.lease_owner).toContain(`_${zombie.child.pid}_`);

    zombie.child.kill('SIGSTOP');
    const rescuer = await stack.startWorker();
    for (let i = 0; i < 200 && (await owner()).lease_fence === before.lease_fence; i++) await sleep(100);
    const after = await owner();
    expect(after.lease_fence).toBeGreaterThan(before.lease_fence);
    expect(after.lease_owner).toContain(`_${rescuer.child.pid}_`);

    zombie.child.kill('SIGCONT');
    await zombie.waitFor((l) => l.msg === 'lease lost; stopped without further writes', 30_000);
    const counts = await settle(stack, [jobId!], 60_000);
    expect(counts).toEqual({ succeeded: 1 });
    expectEachEffectOnce(effects, [jobId!], 2);
    const steps = await stack.db.sql<{ lease_fence: number }[]>`select lease_fence from job_steps where job_id = ${jobId!}`;
    for (const s of steps) expect(s.lease_fence).toBeGreaterThanOrEqual(after.lease_fence);
  });
});
