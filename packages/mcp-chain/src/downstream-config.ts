import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { STEP_EFFECTS } from '@stepwise/shared';

/** Server names are how a chain step says where to call: short, stable, no dots. */
export const SERVER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;

const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key)$/i;

/** Per-tool overrides of what the annotations say (DESIGN §12: "config can override both"). */
export const ToolOverrideSchema = z
  .object({
    effect: z.enum(STEP_EFFECTS).optional(),
    approval: z.enum(['required', 'none']).optional(),
  })
  .strict();
export type ToolOverride = z.infer<typeof ToolOverrideSchema>;

export const StdioServerSchema = z
  .object({
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    /** Added to a minimal inherited environment (PATH, HOME, …). Not for secrets: use `auth`. */
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().min(1).optional(),
  })
  .strict();

export const HttpServerSchema = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'must be an http(s):// URL of a Streamable HTTP MCP endpoint' }),
    headers: z
      .record(z.string(), z.string())
      .refine((h) => !Object.keys(h).some((k) => SECRET_HEADER.test(k)), {
        error: 'credentials must not be written into config; name them with auth.bearerTokenEnv or auth.bearerTokenFile',
      })
      .optional(),
  })
  .strict();

/** Where a credential comes from. It is read when a connection opens, never stored in a job. */
export const DownstreamAuthSchema = z
  .object({
    /** Name of an environment variable of the worker/server process that holds the bearer token. */
    bearerTokenEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
    /** Path of a file holding the bearer token (trimmed); rotate it and answer `retry` to resume. */
    bearerTokenFile: z.string().min(1).optional(),
  })
  .strict()
  .refine((a) => (a.bearerTokenEnv === undefined) !== (a.bearerTokenFile === undefined), {
    error: 'give exactly one of bearerTokenEnv or bearerTokenFile',
  });
export type DownstreamAuth = z.infer<typeof DownstreamAuthSchema>;

export const DownstreamServerSchema = z
  .object({
    stdio: StdioServerSchema.optional(),
    http: HttpServerSchema.optional(),
    auth: DownstreamAuthSchema.optional(),
    /**
     * `default`: tools with destructiveHint need approval unless a chain opts out; `never`: no
     * approvals for this server; `always`: every call needs approval, whatever a chain says.
     */
    approval: z.enum(['default', 'never', 'always']).default('default'),
    /** Per-call timeout when a chain step gives none (ms). */
    callTimeoutMs: z.number().int().min(100).max(3_600_000).default(60_000),
    tools: z.record(z.string(), ToolOverrideSchema).default({}),
  })
  .strict()
  .refine((s) => (s.stdio === undefined) !== (s.http === undefined), { error: 'give exactly one of stdio or http' })
  .refine((s) => s.auth === undefined || s.http !== undefined, {
    error: 'auth applies to http servers; a stdio server gets its credentials from its own environment',
    path: ['auth'],
  });
export type DownstreamServer = z.infer<typeof DownstreamServerSchema>;

export const DownstreamConfigSchema = z
  .object({
    servers: z.record(z.string(), DownstreamServerSchema),
  })
  .strict()
  .superRefine((c, ctx) => {
    for (const name of Object.keys(c.servers)) {
      if (!SERVER_NAME.test(name)) ctx.addIssue({ code: 'custom', path: ['servers', name], message: 'server names are letters, digits, "_" and "-" (at most 64)' });
    }
  });
export type DownstreamConfig = z.infer<typeof DownstreamConfigSchema>;

/** No downstream servers: `mcp.chain` is listed but every plan fails validation with a clear message. */
export const EMPTY_DOWNSTREAM_CONFIG: DownstreamConfig = { servers: {} };

/**
 * Parses servers JSON, reporting each problem (JSON syntax or schema) through zod issues so the
 * app's config loader prints them all and exits (STYLE: config). `where` names a file, or is
 * empty for the inline variable (the issue path already names it).
 */
function parseServersJson(text: string, where: string, ctx: z.RefinementCtx): DownstreamConfig | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e: unknown) {
    ctx.addIssue({ code: 'custom', message: `${where ? `${where} is not` : 'not'} valid JSON: ${e instanceof Error ? e.message : String(e)}` });
    return z.NEVER;
  }
  const parsed = DownstreamConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  for (const i of parsed.error.issues) ctx.addIssue({ code: 'custom', message: `${where ? `${where}: ` : ''}${i.path.join('.') || '(root)'}: ${i.message}` });
  return z.NEVER;
}

/**
 * The environment variables that configure downstream servers, for an app's config schema
 * (`BaseConfigSchema.extend({ ...DOWNSTREAM_ENV_SHAPE })`). Each parses to a DownstreamConfig.
 * - `STEPWISE_MCP_SERVERS_FILE`: path of a JSON file `{ "servers": { … } }`.
 * - `STEPWISE_MCP_SERVERS`: the same JSON inline.
 */
export const DOWNSTREAM_ENV_SHAPE = {
  STEPWISE_MCP_SERVERS_FILE: z
    .string()
    .min(1)
    .optional()
    .transform((path, ctx) => {
      if (path === undefined) return undefined;
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e: unknown) {
        ctx.addIssue({ code: 'custom', message: `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}` });
        return z.NEVER;
      }
      return parseServersJson(text, path, ctx);
    }),
  STEPWISE_MCP_SERVERS: z
    .string()
    .min(1)
    .optional()
    .transform((text, ctx) => (text === undefined ? undefined : parseServersJson(text, '', ctx))),
};

/**
 * One config from the file and the inline variable: servers from both, the inline definition
 * winning for a name given in both (handy for overriding one server in a test or a deployment).
 */
export function mergeDownstreamConfigs(...configs: (DownstreamConfig | undefined)[]): DownstreamConfig {
  const servers: Record<string, DownstreamServer> = {};
  for (const c of configs) Object.assign(servers, c?.servers ?? {});
  return { servers };
}
