import { z } from 'zod';
import { BaseConfigSchema, parseEnv } from '@stepwise/shared';
import { DOWNSTREAM_ENV_SHAPE } from '@stepwise/jobs';

export const WorkerConfigSchema = BaseConfigSchema.extend({
  /** Downstream MCP servers for mcp.chain: a JSON file path, and/or the JSON inline (see README). */
  ...DOWNSTREAM_ENV_SHAPE,
  STEPWISE_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** How long SIGTERM waits for running steps before stopping them at the next boundary. */
  STEPWISE_SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /** 0 disables it; several workers on one host would otherwise fight over one port. */
  STEPWISE_WORKER_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  STEPWISE_WORKER_HEALTH_HOST: z.string().default('127.0.0.1'),
  /** How long an approval request waits for an answer when the job type does not say. */
  STEPWISE_APPROVAL_TTL_MS: z.coerce.number().int().min(1000).default(24 * 60 * 60 * 1000),
  /** What an unanswered approval ends as. */
  STEPWISE_APPROVAL_EXPIRED_STATUS: z.enum(['cancelled', 'failed']).default('cancelled'),
  /** Fairness: at most this many running jobs per tenant across the fleet (0 = no cap). */
  STEPWISE_TENANT_MAX_RUNNING: z.coerce.number().int().min(0).default(100),
  STEPWISE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(200).max(600_000).default(5000),
  /** Finished jobs are deleted (a tombstone stays) after this long. */
  STEPWISE_RETENTION_MS: z.coerce.number().int().min(60_000).default(30 * 24 * 60 * 60 * 1000),
  STEPWISE_CHECKPOINT_RETENTION_MS: z.coerce.number().int().min(60_000).default(7 * 24 * 60 * 60 * 1000),
});
export type WorkerConfig = z.infer<typeof WorkerConfigSchema>;

export function loadWorkerConfig(env: Record<string, string | undefined> = process.env): WorkerConfig {
  return parseEnv(WorkerConfigSchema, env, 'stepwise-worker');
}

/**
 * Reads a credential named in the downstream servers config (`auth.bearerTokenEnv`). Called
 * when a downstream connection opens, so the value is never copied into config or a job.
 */
export function readSecretEnv(name: string): string | undefined {
  return process.env[name];
}
