import { z } from 'zod';
import { BaseConfigSchema, parseEnv, PrincipalIdSchema, ScopeSchema, TenantIdSchema } from '@stepwise/shared';

const csv = <O>(item: z.ZodType<O, string>) =>
  z
    .string()
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(item));

export const ServerConfigSchema = BaseConfigSchema.extend({
  STEPWISE_TRANSPORT: z.enum(['http', 'stdio']).default('http'),
  STEPWISE_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Loopback unless an operator decides otherwise: an MCP endpoint runs tools for whoever reaches it. */
  STEPWISE_HTTP_HOST: z.string().default('127.0.0.1'),
  /** Host header values accepted when bound beyond loopback (DNS-rebinding protection). */
  STEPWISE_ALLOWED_HOSTS: csv(z.string().min(1)).optional(),
  /** The principal this process acts as (until API keys and OAuth land, issue #5). */
  STEPWISE_TENANT: TenantIdSchema.default('local' as never),
  STEPWISE_PRINCIPAL: PrincipalIdSchema.default('local-operator' as never),
  STEPWISE_SCOPES: csv(ScopeSchema).default(['jobs:read', 'jobs:write', 'jobs:cancel', 'jobs:approve']),
  STEPWISE_DEDUP_WINDOW_MS: z.coerce.number().int().min(1000).default(24 * 60 * 60 * 1000),
  STEPWISE_MAX_INPUT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024, 'job inputs live in Postgres rows; pass larger data by reference')
    .default(1024 * 1024),
  STEPWISE_MAX_INPUT_DEPTH: z.coerce.number().int().min(2).max(256).default(32),
  STEPWISE_HTTP_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(4 * 1024 * 1024),
});
export type ServerConfig = z.infer<typeof ServerConfigSchema>;

export function loadServerConfig(env: Record<string, string | undefined> = process.env): ServerConfig {
  return parseEnv(ServerConfigSchema, env, 'stepwise-mcp-server');
}
