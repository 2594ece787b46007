#!/usr/bin/env node
// Throughput and Postgres cost of short jobs, end to end through the real worker processes.
//
//   node bench/throughput.mjs [--jobs 500] [--workers 2] [--concurrency 16] [--steps 3]
//
// Starts jobs through JobService (the exact code path of start_job, minus the transport), runs
// them on real worker processes, and prints jobs/s plus Postgres transactions per job
// (pg_stat_database.xact_commit over a dedicated database). Figures vary with the machine and its
// load; compare runs as ratios on one machine, never against fixed numbers.
import { spawn } from 'node:child_process';
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
    jobs: { type: 'string', default: '500' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '16' },
    steps: { type: 'string', default: '3' },
  },
});
const JOBS = Number(values.jobs);
const WORKERS = Number(values.workers);
const STEPS = Number(values.steps);
const root = fileURLToPath(new URL('..', import.meta.url));
const admin = process.env.STEPWISE_TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `stepwise_bench_${process.pid}`;
const dbUrl = Object.assign(new URL(admin), { pathname: `/${dbName}` }).toString();
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `bench-${process.pid}`;

const adminSql = postgres(admin, { max: 1, onnotice: () => {} });
await adminSql.unsafe(`create database "${dbName}"`);
await runMigrations(dbUrl);

const env = {
  ...process.env,
  DATABASE_URL: dbUrl,
  REDIS_URL: redisUrl,
  STEPWISE_QUEUE_PREFIX: prefix,
  STEPWISE_WORKER_CONCURRENCY: values.concurrency,
  STEPWISE_DATA_DIR: join(tmpdir(), `stepwise-bench-${process.pid}`),
  LOG_LEVEL: 'warn',
};
const workers = [];
for (let i = 0; i < WORKERS; i++) {
  const w = spawn(process.execPath, [join(root, 'apps/worker/dist/main.js')], { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => w.stdout.on('data', (d) => String(d).includes('worker started') && resolve()));
  workers.push(w);
}

const { db, sql, close } = createDb(dbUrl, { max: 20 });
const redis = createRedis(redisUrl);
const sub = createRedis(redisUrl, { blocking: true });
const queue = createJobQueue(redis, prefix);
const service = new JobService(db, queue, new JobUpdateBus(redis, sub, prefix), builtinRegistry(), {
  dedupWindowMs: 86_400_000,
  maxInputBytes: 1 << 20,
  maxInputDepth: 32,
}, createLogger({ name: 'bench', level: 'warn' }));
const principal = { tenantId: unsafeCast.tenantId('bench'), principalId: unsafeCast.principalId('bench'), scopes: new Set(['jobs:write', 'jobs:read']) };

async function xacts() {
  // Stats are flushed by each backend at most once a second once idle; wait for them to settle.
  let last = -1;
  for (;;) {
    await sleep(1100);
    const [row] = await adminSql`select xact_commit::bigint as n from pg_stat_database where datname = ${dbName}`;
    const n = Number(row.n);
    if (n === last) return n;
    last = n;
    await adminSql`select pg_stat_clear_snapshot()`;
  }
}

const before = await xacts();
const t0 = performance.now();
for (let i = 0; i < JOBS; i += 50) {
  await Promise.all(
    Array.from({ length: Math.min(50, JOBS - i) }, (_, k) =>
      service.start(principal, { type: 'demo.steps', input: { steps: STEPS, stepMs: 0 }, idempotencyKey: `b-${i + k}` }, { requestId: 'bench' }),
    ),
  );
}
const tStarted = performance.now();
// Poll with a dedicated connection whose own transactions we count and subtract.
const poll = postgres(dbUrl, { max: 1, onnotice: () => {} });
let polls = 0;
for (;;) {
  polls++;
  const [row] = await poll`select count(*)::int as n from jobs where status = 'succeeded'`;
  if (row.n >= JOBS) break;
  await sleep(20);
}
const tDone = performance.now();
await poll.end();
const [failed] = await sql`select count(*)::int as n from jobs where status <> 'succeeded'`;
// Stop every process and pool that talks to the bench database first: a backend flushes its
// transaction counts when it exits, while an idle one may hold them back for up to 10 s.
for (const w of workers) w.kill('SIGTERM');
await Promise.all(workers.map((w) => new Promise((r) => w.once('exit', r))));
await close();
const after = await xacts();

const total = (tDone - t0) / 1000;
const perJob = (after - before - polls - 2) / JOBS; // -2: the failed-count read and one settle read
process.stdout.write(
  [
    `jobs: ${JOBS} demo.steps x ${STEPS} steps (effect none), ${WORKERS} worker processes x concurrency ${values.concurrency}`,
    `start: ${(JOBS / ((tStarted - t0) / 1000)).toFixed(0)} start_job/s`,
    `end-to-end: ${(JOBS / total).toFixed(0)} jobs/s (${total.toFixed(2)} s for all, from first start to last success)`,
    `postgres: ${perJob.toFixed(2)} transactions per job (xact_commit, poller excluded)`,
    `not succeeded: ${failed.n}`,
  ].join('\n') + '\n',
);

await queue.obliterate({ force: true }).catch(() => undefined);
await Promise.allSettled([queue.close(), redis.quit(), sub.quit()]);
await adminSql.unsafe(`drop database if exists "${dbName}" with (force)`);
await adminSql.end();
