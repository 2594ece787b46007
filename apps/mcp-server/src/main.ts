import { builtinRegistry, DownstreamRegistry, mergeDownstreamConfigs } from '@stepwise/jobs';
import {
  AuditBuffer,
  authenticateApiKey,
  createDb,
  createJobQueue,
  createLogger,
  crashHookFromEnv,
  createRedis,
  JobService,
  JobUpdateBus,
  runMigrations,
  unsafeCast,
} from '@stepwise/shared';
import type { Principal } from '@stepwise/shared';
import { DEFAULT_LOCAL_PRINCIPAL, isLoopbackHost, jwtSettings, loadServerConfig, readSecretEnv } from './config.js';
import { createJwtVerifier } from './auth/jwt-verifier.js';
import { StepwiseTokenVerifier } from './auth/token-verifier.js';
import { firstKeyNotice } from './auth/first-key.js';
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
// start_job checks mcp.chain plans against the downstream servers (tools/list), so the server
// needs the same downstream config as the workers.
const downstream = new DownstreamRegistry(mergeDownstreamConfigs(config.STEPWISE_MCP_SERVERS_FILE, config.STEPWISE_MCP_SERVERS), {
  readEnv: readSecretEnv,
  log,
});
const registry = builtinRegistry({ downstream });
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
    quota: { maxActiveJobs: config.STEPWISE_QUOTA_MAX_ACTIVE_JOBS, startsPerMinute: config.STEPWISE_QUOTA_STARTS_PER_MINUTE },
    requireDistinctApprover: config.STEPWISE_APPROVAL_SEPARATION,
  },
  log,
);
// The local principal (DESIGN §8): stdio's identity, and every HTTP caller's with STEPWISE_AUTH=none.
const localPrincipal: Principal = {
  tenantId: config.STEPWISE_TENANT,
  principalId: config.STEPWISE_PRINCIPAL ?? unsafeCast.principalId(DEFAULT_LOCAL_PRINCIPAL),
  scopes: new Set(config.STEPWISE_SCOPES),
};
// Audit rows of reads, errors and denials (mutations write theirs in their own transaction).
const audit = new AuditBuffer(db, log);
const deps = { service, registry, log, audit };

let closing = false;
async function shutdown(reason: string): Promise<void> {
  if (closing) return;
  closing = true;
  log.info({ reason }, 'server stopping');
  // A store that hangs must not keep the process alive forever: exit regardless after 15 s.
  setTimeout(() => {
    log.error('shutdown did not finish in 15 s; exiting');
    log.flush();
    process.exit(1);
  }, 15_000).unref();
  httpServer?.close();
  // Flush buffered audit rows while the database is still open: none may be lost on shutdown.
  await Promise.allSettled([audit.close(), queue.close(), redis.quit(), sub.quit(), downstream.close()]);
  await closeDb();
  log.flush();
  process.exit(0);
}

let httpServer: Awaited<ReturnType<typeof startHttp>> | undefined;

/** stdio runs as the key's principal (STEPWISE_API_KEY) or the local one; nothing implicit goes unsaid. */
async function stdioPrincipal(): Promise<{ principal: Principal; source: 'api_key' | 'STEPWISE_PRINCIPAL' | 'default' }> {
  if (!config.STEPWISE_API_KEY) return { principal: localPrincipal, source: config.STEPWISE_PRINCIPAL ? 'STEPWISE_PRINCIPAL' : 'default' };
  const r = await authenticateApiKey(db, config.STEPWISE_API_KEY);
  if (!r.ok) {
    log.fatal({ reason: r.reason }, 'STEPWISE_API_KEY refused');
    log.flush();
    process.stderr.write(`stepwise-mcp-server: STEPWISE_API_KEY was refused (${r.reason}); create a key with \`stepwise keys create\`.\n`);
    process.exit(1);
  }
  return { principal: r.principal, source: 'api_key' };
}

if (transport === 'stdio') {
  const { principal, source } = await stdioPrincipal();
  await startStdio(deps, principal, () => void shutdown('stdio closed'));
  process.stdin.on('end', () => void shutdown('stdin ended'));
  const who = { tenantId: principal.tenantId, principalId: principal.principalId, scopes: [...principal.scopes], principalSource: source };
  if (source === 'default') log.warn(who, 'running as the default local principal: set STEPWISE_API_KEY or STEPWISE_PRINCIPAL to choose');
  log.info(who, 'mcp server ready on stdio');
} else {
  const jwt = jwtSettings(config);
  if (config.STEPWISE_AUTH === 'none') {
    log.warn(
      { tenantId: localPrincipal.tenantId, principalId: localPrincipal.principalId, scopes: [...localPrincipal.scopes] },
      'AUTHENTICATION IS OFF (STEPWISE_AUTH=none): every caller that reaches this port acts as the local principal',
    );
  }
  httpServer = await startHttp(deps, {
    host: config.STEPWISE_HTTP_HOST,
    port: config.STEPWISE_HTTP_PORT,
    allowedHosts: config.STEPWISE_ALLOWED_HOSTS,
    bodyLimitBytes: config.STEPWISE_HTTP_BODY_LIMIT_BYTES,
    auth: {
      mode: config.STEPWISE_AUTH,
      localPrincipal,
      verifier: new StepwiseTokenVerifier(db, jwt ? createJwtVerifier(jwt) : undefined),
      jwtIssuer: jwt?.issuer,
      publicUrl: config.STEPWISE_PUBLIC_URL,
    },
    readiness: () => checkReadiness(sql, redis),
    log,
  });
  const addr = httpServer.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.STEPWISE_HTTP_PORT;
  const url = `${config.STEPWISE_PUBLIC_URL?.replace(/\/+$/, '') ?? `http://${config.STEPWISE_HTTP_HOST}:${port}`}/mcp`;
  log.info({ url, auth: config.STEPWISE_AUTH, jwt: jwt ? { issuer: jwt.issuer, audience: jwt.audience } : null }, 'mcp server listening');
  // Quick start: a loopback server with no keys at all mints one and shows it once. Anywhere
  // else a key printed to stdout would end up in shipped logs; operators use the CLI there.
  if (config.STEPWISE_AUTH === 'api_key' && isLoopbackHost(config.STEPWISE_HTTP_HOST)) {
    const notice = await firstKeyNotice(db, config.STEPWISE_TENANT, url);
    if (notice) {
      await new Promise<void>((resolve) => log.flush(() => resolve()));
      process.stdout.write(`${notice}\n`);
      log.info({ tenantId: config.STEPWISE_TENANT }, 'first api key created and printed');
    }
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
