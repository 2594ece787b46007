import type { z } from 'zod';
import { BaseConfigSchema, parseEnv } from '@stepwise/shared';

/** The CLI talks to Postgres only; same variable and default as the server and workers. */
export const CliConfigSchema = BaseConfigSchema.pick({ DATABASE_URL: true });
export type CliConfig = z.infer<typeof CliConfigSchema>;

export function loadCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  return parseEnv(CliConfigSchema, env, 'stepwise');
}
