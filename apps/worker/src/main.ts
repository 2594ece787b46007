import { hostname } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'bullmq';
import {
  CancelledError,
  createDb,
  createJobQueue,
  createLogger,
  crashHookFromEnv,
  createRedis,
  FsBlobStore,
  JobUpdateBus,
  newWorkerId,
  QUEUE_NAME,
  runMigrations,
} from '@stepwise/shared';
import type { DispatchData } from '@stepwise/shared';
import { builtinRegistry, DownstreamRegistry, mergeDownstreamConfigs } from '@stepwise/jobs';
import { loadWorkerConfig, readSecretEnv } from './config.js';
import { StepRunner } from './step-runner.js';
import { JobProcessor } from './job-processor.js';
import { startHealthServer } from './health-server.js';
import { Sweeper } from './sweeper.js';

// Composition root: wires config, stores, queue and runner. No job logic lives here.
const config = loadWorkerConfig();
const workerId = newWorkerId(hostname(), process.pid);
/** Set on SIGTERM: running steps finish, no new step starts, jobs are handed back. */
let draining = false;
const log = createLogger({ name: 'stepwise-worker', level: config.LOG_LEVEL }).child({ workerId });

await runMigrations(config.DATABASE_URL);
const { db, sql, close: closeDb } = createDb(config.DATABASE_URL, { max: config.STEPWISE_DB_POOL, applicationName: 'stepwise-worker' });
const pub = createRedis(config.REDIS_URL, { name: 'stepwise-worker-pub' });
const sub = createRedis(config.REDIS_URL, { blocking: true, name: 'stepwise-worker-sub' });
const bus = new JobUpdateBus(pub, sub, config.STEPWISE_QUEUE_PREFIX);
// mcp.chain's downstream MCP servers: one pooled client each, opened on first use.
const downstream = new DownstreamRegistry(mergeDownstreamConfigs(config.STEPWISE_MCP_SERVERS_FILE, config.STEPWISE_MCP_SERVERS), {
  readEnv: readSecretEnv,
  log,
});
const registry = builtinRegistry({ downstream });
const crashHook = crashHookFromEnv(config.STEPWISE_TEST_CRASH_AT);
const runner = new StepRunner({
  db,
  bus,
  registry,
  blobs: new FsBlobStore(join(config.STEPWISE_DATA_DIR, 'blobs')),
  workerId,
  leaseMs: config.STEPWISE_LEASE_MS,
  log,
  isDraining: () => draining,
  approvalTtlMs: config.STEPWISE_APPROVAL_TTL_MS,
  ...(crashHook ? { crashHook } : {}),
});
const processor = new JobProcessor(db, runner, workerId, config.STEPWISE_LEASE_MS, log, config.STEPWISE_TENANT_MAX_RUNNING);

await bus.onCancel((_tenantId, notice) => {
  if (processor.cancel(notice.jobId, new CancelledError(notice.reason ?? 'The job was cancelled.'))) {
    log.info({ jobId: notice.jobId }, 'cancel notice delivered to running step');
  }
});

const worker = new Worker<DispatchData>(QUEUE_NAME, processor.process, {
  connection: createRedis(config.REDIS_URL, { blocking: true, name: 'stepwise-worker-bullmq' }),
  prefix: config.STEPWISE_QUEUE_PREFIX,
  concurrency: config.STEPWISE_WORKER_CONCURRENCY,
  // BullMQ's lock and our lease agree: a dead worker's job is seen as stalled about when its
  // lease expires, and redelivered; the Postgres fence decides who may actually write.
  lockDuration: config.STEPWISE_LEASE_MS,
  stalledInterval: Math.max(1000, Math.floor(config.STEPWISE_LEASE_MS / 2)),
  maxStalledCount: 1000,
});
worker.on('error', (e) => log.error({ err: e }, 'queue error'));
worker.on('failed', (job, e) => log.error({ err: e, jobId: job?.data.jobId }, 'dispatch failed'));

const sweeper = new Sweeper(
  db,
  sql,
  createJobQueue(pub, config.STEPWISE_QUEUE_PREFIX),
  {
    intervalMs: config.STEPWISE_SWEEP_INTERVAL_MS,
    minAgeMs: 2000,
    retentionMs: config.STEPWISE_RETENTION_MS,
    checkpointRetentionMs: config.STEPWISE_CHECKPOINT_RETENTION_MS,
    batch: 500,
    waitExpiredTo: config.STEPWISE_APPROVAL_EXPIRED_STATUS,
  },
  log,
);
sweeper.start();

const health =
  config.STEPWISE_WORKER_HEALTH_PORT > 0
    ? await startHealthServer(config.STEPWISE_WORKER_HEALTH_PORT, config.STEPWISE_WORKER_HEALTH_HOST, () => draining)
    : undefined;

log.info({ concurrency: config.STEPWISE_WORKER_CONCURRENCY, prefix: config.STEPWISE_QUEUE_PREFIX }, 'worker started');

async function shutdown(signal: string): Promise<void> {
  if (draining) return;
  draining = true;
  log.info({ signal, active: processor.active.size }, 'worker draining');
  // Let running steps finish within the grace period, then hand the rest back at a boundary.
  const grace = setTimeout(() => processor.shutdownAll(), config.STEPWISE_SHUTDOWN_GRACE_MS);
  // Past the grace period plus time to hand jobs back, exit regardless: leases expire anyway.
  setTimeout(() => {
    log.error('shutdown did not finish in time; exiting');
    log.flush();
    process.exit(1);
  }, config.STEPWISE_SHUTDOWN_GRACE_MS + 15_000).unref();
  await Promise.all([worker.close(), sweeper.stop()]);
  clearTimeout(grace);
  health?.close();
  await Promise.allSettled([pub.quit(), sub.quit(), downstream.close()]);
  await closeDb();
  log.info('worker stopped');
  log.flush();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
