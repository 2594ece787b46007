import { builtinRegistry } from '@stepwise/jobs';
import {
  createDb,
  createJobQueue,
  createLogger,
  crashHookFromEnv,
  createRedis,
  JobService,
  JobUpdateBus,
  runMigrations,
} from '@stepwise/shared';
import type { Principal } from '@stepwise/shared';
import { loadServerConfig } from './config.js';
import { startHttp } from './http.js';
import { startStdio } from './stdio.js';
import { checkReadiness } from './readiness.js';

// Composition root: wires config, stores, queue and transports. No job logic lives here.
const config = loadServerConfig();
const transport = process.argv.includes('--stdio') ? 'stdio' : process.argv.includes('--http') ? 'http' : config.STEPWISE_TRANSPORT;
// Over stdio, stdout carries the protocol; every log line must go to stderr.
const log = createLogger({ name: 'stepwise-mcp', level: config.LOG_LEVEL, fd: transport === 'stdio' ? 2 : 1 });

await runMigrations(config.DATABASE_URL);
const { db, sql, close: closeDb } = createDb(config.DATABASE_URL, { max: config.STEPWISE_DB_POOL, applicationName: 'stepwise-mcp' });
const redis = createRedis(config.REDIS_URL, { name: 'stepwise-mcp' });
const sub = createRedis(config.REDIS_URL, { blocking: true, name: 'stepwise-mcp-sub' });
redis.on('error', (e) => log.warn({ err: e }, 'redis error'));
sub.on('error', (e) => log.warn({ err: e }, 'redis subscriber error'));
const queue = createJobQueue(redis, config.STEPWISE_QUEUE_PREFIX);
queue.on('error', (e) => log.warn({ err: e }, 'queue error'));
const bus = new JobUpdateBus(redis, sub, config.STEPWISE_QUEUE_PREFIX);
const registry = builtinRegistry();
const service = new JobService(
  db,
  queue,
  bus,
  registry,
  {
    dedupWindowMs: config.STEPWISE_DEDUP_WINDOW_MS,
    maxInputBytes: config.STEPWISE_MAX_INPUT_BYTES,
    maxInputDepth: config.STEPWISE_MAX_INPUT_DEPTH,
    crashHook: crashHookFromEnv(config.STEPWISE_TEST_CRASH_AT),
  },
  log,
);
const principal: Principal = {
  tenantId: config.STEPWISE_TENANT,
  principalId: config.STEPWISE_PRINCIPAL,
  scopes: new Set(config.STEPWISE_SCOPES),
};
const deps = { service, registry, log };

let closing = false;
async function shutdown(reason: string): Promise<void> {
  if (closing) return;
  closing = true;
  log.info({ reason }, 'server stopping');
  httpServer?.close();
  await Promise.allSettled([queue.close(), redis.quit(), sub.quit()]);
  await closeDb();
  log.flush();
  process.exit(0);
}

let httpServer: Awaited<ReturnType<typeof startHttp>> | undefined;
if (transport === 'stdio') {
  await startStdio(deps, principal, () => void shutdown('stdio closed'));
  process.stdin.on('end', () => void shutdown('stdin ended'));
  log.info({ tenantId: principal.tenantId, principalId: principal.principalId }, 'mcp server ready on stdio');
} else {
  httpServer = await startHttp(deps, {
    host: config.STEPWISE_HTTP_HOST,
    port: config.STEPWISE_HTTP_PORT,
    allowedHosts: config.STEPWISE_ALLOWED_HOSTS,
    bodyLimitBytes: config.STEPWISE_HTTP_BODY_LIMIT_BYTES,
    principal,
    readiness: () => checkReadiness(sql, redis),
    log,
  });
  const addr = httpServer.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.STEPWISE_HTTP_PORT;
  log.info({ url: `http://${config.STEPWISE_HTTP_HOST}:${port}/mcp` }, 'mcp server listening');
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
