import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

const url = (protocols: string[], why: string) =>
  z
    .string()
    .refine((v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    }, why);

/** Settings every Stepwise process shares. Defaults work on a developer machine with local services. */
export const BaseConfigSchema = z.object({
  DATABASE_URL: url(['postgres:', 'postgresql:'], 'must be a postgres:// URL, e.g. postgres://postgres@127.0.0.1:5432/stepwise').default(
    'postgres://postgres@127.0.0.1:5432/stepwise',
  ),
  REDIS_URL: url(['redis:', 'rediss:'], 'must be a redis:// URL, e.g. redis://127.0.0.1:6379').default('redis://127.0.0.1:6379'),
  STEPWISE_QUEUE_PREFIX: z
    .string()
    .regex(/^[a-zA-Z0-9_-]+$/, 'letters, digits, dash and underscore only: it prefixes every Redis key')
    .default('stepwise'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  STEPWISE_DATA_DIR: z.string().min(1).default(join(homedir(), '.stepwise')),
  STEPWISE_LEASE_MS: z.coerce
    .number()
    .int()
    .min(1000, 'under 1 s a GC pause would lose leases')
    .max(300_000, 'a longer lease delays recovery after a crash by that much')
    .default(10_000),
  // At least 2: the sweeper holds one connection for its lock while it queries on another.
  STEPWISE_DB_POOL: z.coerce.number().int().min(2, 'needs 2 or more: the sweeper holds one connection while using another').max(200).default(10),
  /** Test-only: `<point>:<name>` makes the process SIGKILL itself there (crash-matrix tests). */
  STEPWISE_TEST_CRASH_AT: z
    .string()
    .regex(/^[a-z-]+:[a-z0-9._-]+$/, 'looks like after-intent:step-002')
    .optional(),
});
export type BaseConfig = z.infer<typeof BaseConfigSchema>;
