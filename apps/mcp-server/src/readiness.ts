import type { Redis } from 'ioredis';
import { migrationsApplied } from '@stepwise/shared';
import type { DbHandle } from '@stepwise/shared';

export interface Readiness {
  ready: boolean;
  checks: { postgres: boolean; redis: boolean; migrations: boolean };
}

async function ok(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** `/readyz`: Postgres and Redis answer, and this build's migrations are applied. */
export async function checkReadiness(sql: DbHandle['sql'], redis: Redis): Promise<Readiness> {
  const [pg, rd, mig] = await Promise.all([
    ok(sql`select 1`, 2000),
    ok(redis.ping(), 2000),
    ok(migrationsApplied(sql).then((applied) => (applied ? true : Promise.reject(new Error('pending')))), 2000),
  ]);
  return { ready: pg && rd && mig, checks: { postgres: pg, redis: rd, migrations: mig } };
}
