import { z } from 'zod';
import { BaseConfigSchema, looksLikeApiKey, parseEnv, PrincipalIdSchema, ScopeSchema, TenantIdSchema } from '@stepwise/shared';
import { DOWNSTREAM_ENV_SHAPE } from '@stepwise/jobs';

const httpUrl = (why: string) =>
  z.string().refine((v) => {
    try {
      return ['http:', 'https:'].includes(new URL(v).protocol);
    } catch {
      return false;
    }
  }, why);

const csv = <O>(item: z.ZodType<O, string>) =>
  z
    .string()
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(item));

export const ServerConfigSchema = BaseConfigSchema.extend({
  /** Downstream MCP servers for mcp.chain (start_job checks chains against them): a JSON file path, and/or the JSON inline. */
  ...DOWNSTREAM_ENV_SHAPE,
  STEPWISE_TRANSPORT: z.enum(['http', 'stdio']).default('http'),
  STEPWISE_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Loopback unless an operator decides otherwise: an MCP endpoint runs tools for whoever reaches it. */
  STEPWISE_HTTP_HOST: z.string().default('127.0.0.1'),
  /** Host header values accepted when bound beyond loopback (DNS-rebinding protection). */
  STEPWISE_ALLOWED_HOSTS: csv(z.string().min(1)).optional(),
  /**
   * The local principal: who a stdio server acts as (unless STEPWISE_API_KEY names a key), and
   * who every HTTP caller acts as with STEPWISE_AUTH=none. Unset STEPWISE_PRINCIPAL means
   * DEFAULT_LOCAL_PRINCIPAL, and the server says so in its log.
   */
  STEPWISE_TENANT: TenantIdSchema.default('local' as never),
  STEPWISE_PRINCIPAL: PrincipalIdSchema.optional(),
  STEPWISE_SCOPES: csv(ScopeSchema).default(['jobs:read', 'jobs:write', 'jobs:cancel', 'jobs:approve']),
  /** stdio only: run as this API key's principal (checked at start) instead of the local one. */
  STEPWISE_API_KEY: z
    .string()
    .refine(looksLikeApiKey, 'must be a key as printed by `stepwise keys create` (sw_<12 chars>_<32 chars>)')
    .optional(),
  /** HTTP: `api_key` requires a Bearer API key (or a JWT in JWT mode) on every request; `none` trusts every caller as the local principal. */
  STEPWISE_AUTH: z.enum(['api_key', 'none']).default('api_key'),
  /** The URL clients reach this server at (scheme, host, optional path, without /mcp), when a proxy sits in front; used in OAuth metadata. */
  STEPWISE_PUBLIC_URL: httpUrl('must be an http(s) URL such as https://jobs.example.com').optional(),
  /** JWT resource-server mode: all three set, or none. */
  STEPWISE_JWT_ISSUER: z.string().min(1).optional(),
  STEPWISE_JWT_AUDIENCE: z.string().min(1).optional(),
  STEPWISE_JWT_JWKS_URL: httpUrl('must be the http(s) URL of the issuer\'s JWKS, e.g. https://issuer.example.com/.well-known/jwks.json').optional(),
  STEPWISE_JWT_TENANT_CLAIM: z.string().min(1).default('tenant'),
  STEPWISE_DEDUP_WINDOW_MS: z.coerce.number().int().min(1000).default(24 * 60 * 60 * 1000),
  STEPWISE_MAX_INPUT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16 * 1024 * 1024, 'job inputs live in Postgres rows; pass larger data by reference')
    .default(1024 * 1024),
  STEPWISE_MAX_INPUT_DEPTH: z.coerce.number().int().min(2).max(256).default(32),
  STEPWISE_HTTP_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(4 * 1024 * 1024),
  /** Per principal: jobs pending, running, waiting or retrying at once; start_job answers rate_limited beyond it. */
  STEPWISE_QUOTA_MAX_ACTIVE_JOBS: z.coerce.number().int().min(1).default(1000),
  /** Per principal: jobs created per sliding minute (dedup hits are not counted against it). */
  STEPWISE_QUOTA_STARTS_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** Four-eyes rule: the principal who started a job may not approve its steps. */
  STEPWISE_APPROVAL_SEPARATION: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
}).superRefine((c, ctx) => {
  if (c.STEPWISE_AUTH === 'none' && !isLoopbackHost(c.STEPWISE_HTTP_HOST)) {
    ctx.addIssue({
      code: 'custom',
      path: ['STEPWISE_AUTH'],
      message: `"none" is refused unless STEPWISE_HTTP_HOST is a loopback address (it is ${c.STEPWISE_HTTP_HOST}): without authentication anyone who reaches the port acts as the local principal`,
    });
  }
  const jwt = [c.STEPWISE_JWT_ISSUER, c.STEPWISE_JWT_AUDIENCE, c.STEPWISE_JWT_JWKS_URL];
  if (jwt.some(Boolean) && !jwt.every(Boolean)) {
    ctx.addIssue({
      code: 'custom',
      path: ['STEPWISE_JWT_ISSUER'],
      message: 'JWT mode needs all of STEPWISE_JWT_ISSUER, STEPWISE_JWT_AUDIENCE and STEPWISE_JWT_JWKS_URL: a token checked against only some of them would be accepted too widely',
    });
  }
  if (c.STEPWISE_AUTH === 'none' && jwt.some(Boolean)) {
    ctx.addIssue({ code: 'custom', path: ['STEPWISE_AUTH'], message: '"none" contradicts the STEPWISE_JWT_* settings: with no authentication no token is checked' });
  }
  if (c.STEPWISE_API_KEY && c.STEPWISE_PRINCIPAL) {
    ctx.addIssue({
      code: 'custom',
      path: ['STEPWISE_API_KEY'],
      message: 'set STEPWISE_API_KEY or STEPWISE_PRINCIPAL, not both: which one the server acts as must not be a guess',
    });
  }
});
export type ServerConfig = z.infer<typeof ServerConfigSchema>;

/** Who the local principal is when STEPWISE_PRINCIPAL is not set. */
export const DEFAULT_LOCAL_PRINCIPAL = 'local-operator';

/** Addresses only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** JWT resource-server settings when all three are set. */
export function jwtSettings(c: ServerConfig): { issuer: string; audience: string; jwksUrl: string; tenantClaim: string } | undefined {
  if (!c.STEPWISE_JWT_ISSUER || !c.STEPWISE_JWT_AUDIENCE || !c.STEPWISE_JWT_JWKS_URL) return undefined;
  return { issuer: c.STEPWISE_JWT_ISSUER, audience: c.STEPWISE_JWT_AUDIENCE, jwksUrl: c.STEPWISE_JWT_JWKS_URL, tenantClaim: c.STEPWISE_JWT_TENANT_CLAIM };
}

export function loadServerConfig(env: Record<string, string | undefined> = process.env): ServerConfig {
  return parseEnv(ServerConfigSchema, env, 'stepwise-mcp-server');
}

/**
 * Reads a credential named in the downstream servers config (`auth.bearerTokenEnv`). Called
 * when a downstream connection opens, so the value is never copied into config or a job.
 */
export function readSecretEnv(name: string): string | undefined {
  return process.env[name];
}
