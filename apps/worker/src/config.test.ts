import { describe, it, expect } from 'vitest';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { WorkerConfigSchema, loadWorkerConfig } from './config.js';

// parseEnv exits the process on invalid config, so failures are tested on the schema itself.

function issuesFor(env: Record<string, string>): { path: string; message: string }[] {
  const r = WorkerConfigSchema.safeParse(env);
  expect(r.success).toBe(false);
  return (r.error?.issues ?? []).map((i) => ({ path: i.path.join('.'), message: i.message }));
}

describe('worker config', () => {
  it('loads working defaults from an empty environment', () => {
    const c = loadWorkerConfig({});
    expect(c).toMatchObject({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/stepwise',
      REDIS_URL: 'redis://127.0.0.1:6379',
      STEPWISE_QUEUE_PREFIX: 'stepwise',
      LOG_LEVEL: 'info',
      STEPWISE_DATA_DIR: join(homedir(), '.stepwise'),
      STEPWISE_LEASE_MS: 10_000,
      STEPWISE_DB_POOL: 10,
      STEPWISE_WORKER_CONCURRENCY: 4,
      STEPWISE_SHUTDOWN_GRACE_MS: 10_000,
      STEPWISE_WORKER_HEALTH_PORT: 0,
      STEPWISE_WORKER_HEALTH_HOST: '127.0.0.1',
    });
    // An empty environment is enough: nothing required is missing, and nothing unknown appears.
    const declared = Object.keys(WorkerConfigSchema.shape);
    for (const [key, value] of Object.entries(c)) {
      expect(declared).toContain(key);
      expect(value, key).not.toBeUndefined();
    }
  });

  it('coerces numeric strings and keeps given values', () => {
    const c = loadWorkerConfig({
      DATABASE_URL: 'postgresql://u:p@db:5433/x',
      REDIS_URL: 'rediss://cache:6380',
      STEPWISE_QUEUE_PREFIX: 'prod_eu-1',
      LOG_LEVEL: 'debug',
      STEPWISE_LEASE_MS: '30000',
      STEPWISE_DB_POOL: '50',
      STEPWISE_WORKER_CONCURRENCY: '16',
      STEPWISE_SHUTDOWN_GRACE_MS: '0',
      STEPWISE_WORKER_HEALTH_PORT: '9464',
      STEPWISE_WORKER_HEALTH_HOST: '0.0.0.0',
    });
    expect(c).toMatchObject({
      DATABASE_URL: 'postgresql://u:p@db:5433/x',
      REDIS_URL: 'rediss://cache:6380',
      STEPWISE_QUEUE_PREFIX: 'prod_eu-1',
      LOG_LEVEL: 'debug',
      STEPWISE_LEASE_MS: 30_000,
      STEPWISE_DB_POOL: 50,
      STEPWISE_WORKER_CONCURRENCY: 16,
      STEPWISE_SHUTDOWN_GRACE_MS: 0,
      STEPWISE_WORKER_HEALTH_PORT: 9464,
      STEPWISE_WORKER_HEALTH_HOST: '0.0.0.0',
    });
  });

  it('ignores unrelated environment variables', () => {
    const c = loadWorkerConfig({ PATH: '/usr/bin', HOME: '/root' });
    expect('PATH' in c).toBe(false);
  });

  it.each([
    ['STEPWISE_WORKER_CONCURRENCY', '0'],
    ['STEPWISE_WORKER_CONCURRENCY', '257'],
    ['STEPWISE_WORKER_CONCURRENCY', '1.5'],
    ['STEPWISE_WORKER_CONCURRENCY', 'many'],
    ['STEPWISE_SHUTDOWN_GRACE_MS', '-1'],
    ['STEPWISE_SHUTDOWN_GRACE_MS', '600001'],
    ['STEPWISE_WORKER_HEALTH_PORT', '65536'],
    ['STEPWISE_WORKER_HEALTH_PORT', '-1'],
    ['STEPWISE_DB_POOL', '0'],
    ['STEPWISE_DB_POOL', '201'],
    ['LOG_LEVEL', 'verbose'],
    ['STEPWISE_QUEUE_PREFIX', 'has:colon'],
    ['STEPWISE_QUEUE_PREFIX', 'has space'],
    ['STEPWISE_QUEUE_PREFIX', ''],
    ['STEPWISE_DATA_DIR', ''],
  ])('rejects %s=%j and names the variable', (key, value) => {
    const issues = issuesFor({ [key]: value });
    expect(issues.map((i) => i.path)).toContain(key);
  });

  it('explains why a lease is out of range', () => {
    expect(issuesFor({ STEPWISE_LEASE_MS: '999' })).toEqual([{ path: 'STEPWISE_LEASE_MS', message: 'under 1 s a GC pause would lose leases' }]);
    expect(issuesFor({ STEPWISE_LEASE_MS: '300001' })).toEqual([
      { path: 'STEPWISE_LEASE_MS', message: 'a longer lease delays recovery after a crash by that much' },
    ]);
  });

  it('explains what a bad service URL should look like', () => {
    const db = issuesFor({ DATABASE_URL: 'mysql://localhost/x' });
    expect(db[0]?.path).toBe('DATABASE_URL');
    expect(db[0]?.message).toMatch(/postgres:\/\//);
    expect(issuesFor({ DATABASE_URL: 'not a url' })[0]?.path).toBe('DATABASE_URL');
    const redis = issuesFor({ REDIS_URL: 'http://127.0.0.1:6379' });
    expect(redis[0]?.path).toBe('REDIS_URL');
    expect(redis[0]?.message).toMatch(/redis:\/\//);
  });

  it('reports every problem at once, not just the first', () => {
    const issues = issuesFor({ STEPWISE_WORKER_CONCURRENCY: '0', LOG_LEVEL: 'loud', REDIS_URL: 'nope', STEPWISE_LEASE_MS: '5' });
    expect(issues.map((i) => i.path).sort()).toEqual(['LOG_LEVEL', 'REDIS_URL', 'STEPWISE_LEASE_MS', 'STEPWISE_WORKER_CONCURRENCY']);
  });

  it('accepts the boundary values', () => {
    const r = WorkerConfigSchema.safeParse({
      STEPWISE_WORKER_CONCURRENCY: '256',
      STEPWISE_SHUTDOWN_GRACE_MS: '600000',
      STEPWISE_WORKER_HEALTH_PORT: '65535',
      STEPWISE_LEASE_MS: '1000',
      STEPWISE_DB_POOL: '2',
    });
    expect(r.success).toBe(true);
    expect(r.data?.STEPWISE_WORKER_CONCURRENCY).toBe(256);
    expect(r.data?.STEPWISE_LEASE_MS).toBe(1000);
  });
});
