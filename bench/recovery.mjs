#!/usr/bin/env node
// Failover and cancel latency across real worker processes.
//
//   node bench/recovery.mjs [--runs 20] [--lease-ms 2000]
//
// Failover: two workers; a long demo.steps job runs on one; SIGKILL that one and time until the
// other claims the job (jobs.lease_fence increases, seen by a 10 ms poller). Cancel: time from
// JobService.cancel to the running step's AbortSignal (the worker's own log line, wall clock, same
// host) and to the row reaching 'cancelled'. Figures vary with the machine and its load.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import postgres from '../packages/shared/node_modules/postgres/src/index.js';
import {
  createDb,
  createJobQueue,
  createLogger,
  createRedis,
  JobService,
  JobUpdateBus,
  runMigrations,
  unsafeCast,
} from '../packages/shared/dist/index.js';
import { builtinRegistry } from '../packages/jobs/dist/index.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    'lease-ms': { type: 'string', default: '2000' },
  },
});
const RUNS = Number(values.runs);
const LEASE_MS = Number(values['lease-ms']);
if (!(RUNS >= 1) || !(LEASE_MS >= 500)) throw new Error('--runs must be >= 1 and --lease-ms >= 500');
const STALLED_MS = Math.max(1000, Math.floor(LEASE_MS / 2)); // as apps/worker/src/main.ts sets it
const root = fileURLToPath(new URL('..', import.meta.url));
const admin = process.env.STEPWISE_TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `stepwise_bench_recovery_${process.pid}`;
const dbUrl = Object.assign(new URL(admin), { pathname: `/${dbName}` }).toString();
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `bench-recovery-${process.pid}`;
const dataDir = join(tmpdir(), `stepwise-bench-recovery-${process.pid}`);
const env = {
  ...process.env,
  DATABASE_URL: dbUrl,
  REDIS_URL: redisUrl,
  STEPWISE_QUEUE_PREFIX: prefix,
  STEPWISE_DATA_DIR: dataDir,
  STEPWISE_LEASE_MS: String(LEASE_MS),
  STEPWISE_SHUTDOWN_GRACE_MS: '1000',
  LOG_LEVEL: 'info',
};

/** Polls `fn` until it returns something truthy; throws a clear error after `timeoutMs`. */
async function until(what, timeoutMs, everyMs, fn) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A worker process whose pino JSON lines are kept, so waits can look for one. */
function spawnWorker() {
  const child = spawn(process.execPath, [join(root, 'apps/worker/dist/main.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = [];
  createInterface({ input: child.stdout }).on('line', (raw) => {
    try {
      lines.push(JSON.parse(raw));
    } catch {
      lines.push({ msg: raw });
    }
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const waitLine = (what, pred, timeoutMs = 10_000) =>
    until(`${what} (worker ${child.pid}); last lines: ${JSON.stringify(lines.slice(-3))}`, timeoutMs, 5, () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`worker ${child.pid} exited while waiting for ${what}`);
      return lines.find(pred);
    });
  return { child, pid: child.pid, lines, exited, waitLine };
}

async function startWorker() {
  const w = spawnWorker();
  await w.waitLine('worker started', (l) => l.msg === 'worker started', 30_000);
  return w;
}

async function stopWorker(w, signal = 'SIGTERM') {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return;
  w.child.kill(signal);
  const done = await Promise.race([w.exited.then(() => true), sleep(5000).then(() => false)]);
  if (!done) {
    w.child.kill('SIGKILL');
    await w.exited;
  }
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.max(0, Math.ceil(p * s.length) - 1)];
  const f = (n) => n.toFixed(0).padStart(6);
  return `p50 ${f(q(0.5))}  p90 ${f(q(0.9))}  p99 ${f(q(0.99))}  min ${f(s[0])}  max ${f(s[s.length - 1])}  ms (n=${s.length})`;
}

const adminSql = postgres(admin, { max: 1, onnotice: () => {} });
await adminSql.unsafe(`create database "${dbName}"`);
const workers = [];
let dbHandle, redis, sub, queue, poll;
const meta = { requestId: 'bench-recovery' };
const failover = { total: [], leaseLeft: [], afterExpiry: [], dbClaim: [] };
const cancel = { signal: [], row: [], call: [], logged: [] };
let missingSignalLines = 0;
try {
  await runMigrations(dbUrl);
  for (let i = 0; i < 2; i++) workers.push(await startWorker());
  dbHandle = createDb(dbUrl, { max: 5 });
  redis = createRedis(redisUrl);
  sub = createRedis(redisUrl, { blocking: true });
  queue = createJobQueue(redis, prefix);
  const service = new JobService(dbHandle.db, queue, new JobUpdateBus(redis, sub, prefix), builtinRegistry(), {
    dedupWindowMs: 86_400_000,
    maxInputBytes: 1 << 20,
    maxInputDepth: 32,
  }, createLogger({ name: 'bench', level: 'warn' }));
  const principal = {
    tenantId: unsafeCast.tenantId('bench'),
    principalId: unsafeCast.principalId('bench'),
    scopes: new Set(['jobs:write', 'jobs:read', 'jobs:cancel']),
  };
  // The poller: its own single connection, so it never queues behind the service's writes.
  poll = postgres(dbUrl, { max: 1, onnotice: () => {} });
  const row = async (id) => (await poll`select status, lease_owner, lease_fence, lease_expires_at from jobs where id = ${id}`)[0];
  const start = async (key, input) => (await service.start(principal, { type: 'demo.steps', input, idempotencyKey: key }, meta)).job.id;
  const running = (id) => until(`job ${id} to be running`, 15_000, 5, async () => {
    const r = await row(id);
    return r?.status === 'running' && r.lease_owner ? r : undefined;
  });
  const holder = (r) => {
    const pid = Number(String(r.lease_owner).split('_')[2]); // wrk_<host>_<pid>_<rand>
    const w = workers.find((x) => x.pid === pid);
    if (!w) throw new Error(`lease owner ${r.lease_owner} is none of the bench's workers`);
    return w;
  };
  const cancelAndWait = async (id) => {
    await service.cancel(principal, id, 'bench', meta);
    await until(`job ${id} to be cancelled`, 15_000, 5, async () => (await row(id))?.status === 'cancelled');
  };

  process.stdout.write(
    `recovery bench: node ${process.version}, 2 worker processes, STEPWISE_LEASE_MS=${LEASE_MS} ` +
      `(BullMQ lockDuration ${LEASE_MS}, stalledInterval ${STALLED_MS}), runs ${RUNS}\n`,
  );

  // 1. Failover.
  for (let i = 0; i < RUNS; i++) {
    const id = await start(`failover-${i}`, { steps: 3, stepMs: 5000 });
    const before = await running(id);
    const victim = holder(before);
    // Kill at a random point of the renewal cycle, not always right after the claim.
    await sleep(Math.random() * LEASE_MS);
    victim.child.kill('SIGKILL');
    const t0 = performance.now();
    const killedAt = Date.now();
    const { lease_expires_at: expiresAt } = await row(id); // the dead worker can renew no more
    const after = await until(`another worker to claim job ${id} after SIGKILL`, LEASE_MS * 5 + 15_000, 10, async () => {
      const r = await row(id);
      return r && r.lease_fence > before.lease_fence ? r : undefined;
    });
    const t1 = performance.now();
    if (holder(after) === victim) throw new Error('the killed worker claimed the job again');
    const [ev] = await poll`select at from job_events where job_id = ${id} and kind = 'lease_taken_over' order by id desc limit 1`;
    failover.total.push(t1 - t0);
    failover.leaseLeft.push(expiresAt.getTime() - killedAt);
    failover.afterExpiry.push(t1 - t0 - (expiresAt.getTime() - killedAt));
    if (ev) failover.dbClaim.push(ev.at.getTime() - killedAt);
    await cancelAndWait(id);
    await victim.exited;
    workers.splice(workers.indexOf(victim), 1);
    workers.push(await startWorker());
  }

  // 2. Cancel latency.
  for (let i = 0; i < RUNS; i++) {
    const id = await start(`cancel-${i}`, { steps: 1, stepMs: 60_000 });
    const w = holder(await running(id));
    await sleep(100); // let the step get into its sleep
    const wall0 = Date.now();
    const t0 = performance.now();
    await service.cancel(principal, id, 'bench', meta);
    cancel.call.push(performance.now() - t0);
    await until(`job ${id} to be cancelled`, 15_000, 5, async () => (await row(id))?.status === 'cancelled');
    cancel.row.push(performance.now() - t0);
    const done = await w.waitLine(`'job cancelled' for ${id}`, (l) => l.msg === 'job cancelled' && l.jobId === id, 5000);
    cancel.logged.push(Date.parse(done.time) - wall0);
    const delivered = w.lines.find((l) => l.msg === 'cancel notice delivered to running step' && l.jobId === id);
    if (delivered) cancel.signal.push(Date.parse(delivered.time) - wall0);
    else missingSignalLines++; // then the lease heartbeat saw the flag instead
  }

  const out = [
    `failover: SIGKILL of the holder (0..${LEASE_MS} ms after its claim) -> job claimed by the other worker (lease_fence up, 10 ms poll)`,
    `  recovery                          ${stats(failover.total)}`,
    `  lease left at the kill            ${stats(failover.leaseLeft)}`,
    `  claim after the lease expired     ${stats(failover.afterExpiry)}`,
    failover.dbClaim.length ? `  claim txn start (job_events.at)   ${stats(failover.dbClaim)}` : '',
    `  note: recovery ~ lease expiry (renewed every lease/3, so 2/3..1 x ${LEASE_MS} ms after the kill) + BullMQ stall`,
    `        detection (lock ${LEASE_MS} ms, checked every ${STALLED_MS} ms) + redelivery and claim.`,
    `cancel: JobService.cancel on a running demo.steps step (stepMs 60000)`,
    cancel.signal.length
      ? `  cancel -> AbortSignal fired       ${stats(cancel.signal)}  (worker log 'cancel notice delivered', ms wall clock)`
      : '',
    missingSignalLines ? `  (${missingSignalLines} runs had no 'cancel notice delivered' line: seen via the heartbeat instead)` : '',
    `  cancel() call returned            ${stats(cancel.call)}`,
    `  cancel -> 'job cancelled' logged  ${stats(cancel.logged)}  (after cleanup and the final write)`,
    `  cancel -> row 'cancelled' seen    ${stats(cancel.row)}  (5 ms poll; includes cleanup + final write: upper bound on signal latency)`,
  ];
  process.stdout.write(out.filter(Boolean).join('\n') + '\n');
} finally {
  await Promise.allSettled(workers.map((w) => stopWorker(w)));
  await queue?.obliterate({ force: true }).catch(() => undefined);
  await Promise.allSettled([queue?.close(), redis?.quit(), sub?.quit(), poll?.end(), dbHandle?.close()]);
  await adminSql.unsafe(`drop database if exists "${dbName}" with (force)`).catch((e) => process.stderr.write(`drop failed: ${e}\n`));
  await adminSql.end();
  await rm(dataDir, { recursive: true, force: true });
}
