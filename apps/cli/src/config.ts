import type { z } from 'zod';
import { BaseConfigSchema, parseEnv } from '@stepwise/shared';

/** Same variables and defaults as the server and workers; Redis only for `jobs retry`'s dispatch. */
export const CliConfigSchema = BaseConfigSchema.pick({ DATABASE_URL: true, REDIS_URL: true, STEPWISE_QUEUE_PREFIX: true });
export type CliConfig = z.infer<typeof CliConfigSchema>;

export function loadCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  return parseEnv(CliConfigSchema, env, 'stepwise');
}
