import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AuditRecord, AuditSink, CallMeta, JobRegistry, JobService, Logger, Principal } from '@stepwise/shared';
import {
  auditArgs,
  canonicalJson,
  checkStorableStrings,
  InvalidInputError,
  JobIdSchema,
  newRequestId,
  sha256Hex,
  toJobView,
  toStepView,
  ToolErrorSchema,
} from '@stepwise/shared';
import { TOOLS } from './tools/index.js';
import type { ToolContext } from './tools/index.js';
import { toToolError } from './to-tool-result.js';

export const SERVER_INFO = { name: 'stepwise', title: 'Stepwise durable jobs', version: '0.1.0' };

const INSTRUCTIONS = [
  'Stepwise runs long tasks as durable jobs that survive disconnects and crashes.',
  'Use start_job (with an idempotencyKey you reuse on retries), then get_job_status with waitSeconds to follow it; cancel_job stops it.',
  'Errors carry a category and whether to retry.',
].join(' ');

export interface McpServerDeps {
  service: JobService;
  registry: JobRegistry;
  log: Logger;
  /** Where tool calls without their own transactional audit row are recorded (reads, errors, denials). */
  audit: AuditSink;
}

/**
 * The audit record of one call that did not write its own row (DESIGN §8): reads, and every
 * error or denial. Secrets are redacted (plus the paths a job type declares for start_job).
 */
function auditRecordOf(
  deps: McpServerDeps,
  principal: Principal,
  meta: CallMeta,
  action: string,
  args: unknown,
  failure: { code: string; category: string } | undefined,
): AuditRecord {
  const a = (args !== null && typeof args === 'object' && !Array.isArray(args) ? args : {}) as Record<string, unknown>;
  const jobId = JobIdSchema.safeParse(a.jobId);
  const type = action === 'start_job' && typeof a.type === 'string' && deps.registry.has(a.type) ? deps.registry.get(a.type) : undefined;
  let digest: string | undefined;
  try {
    digest = sha256Hex(canonicalJson(args ?? null));
  } catch {
    digest = undefined; // not JSON-shaped (cannot come off the wire); the redacted args still tell
  }
  return {
    tenantId: principal.tenantId,
    principalId: principal.principalId,
    clientName: meta.clientName,
    clientVersion: meta.clientVersion,
    action,
    targetJobId: jobId.success ? jobId.data : undefined,
    argsDigest: digest,
    argsRedacted: auditArgs(args ?? null, type ? type.redact.map((p) => `input.${p}`) : []),
    outcome: !failure ? 'success' : failure.category === 'forbidden' || failure.category === 'unauthorized' ? 'denied' : 'error',
    errorCode: failure?.code,
    requestId: meta.requestId,
    traceId: meta.traceId,
  };
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete s.$schema;
  return s;
}

/**
 * A tool's declared output: its success shape OR the tool-error shape. Clients (the SDK's
 * included) validate structuredContent against outputSchema even on `isError` results, so the
 * error payload must be part of the declared schema.
 */
function outputJsonSchema(success: z.ZodType): Record<string, unknown> {
  return { type: 'object', anyOf: [jsonSchemaOf(success, 'output'), jsonSchemaOf(ToolErrorSchema, 'output')] };
}

/**
 * One MCP server instance bound to one caller. It is cheap: HTTP builds one per request
 * (the server is stateless; jobs live in Postgres), stdio builds one per process.
 */
export function createMcpServer(deps: McpServerDeps, principal: Principal): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: {} },
    instructions: INSTRUCTIONS,
  });
  const byName = new Map(TOOLS.map((t) => [t.name, t]));
  // Schemas are derived once per server from the zod definitions; they never change at runtime.
  const listed = TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: (t.inputJsonSchema ? t.inputJsonSchema(deps.registry) : jsonSchemaOf(t.input, 'input')) as { type: 'object' },
    outputSchema: outputJsonSchema(t.output) as { type: 'object' },
    annotations: t.annotations,
  }));

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));

  /** Records a call unless the service already audited it in its own transaction; never throws. */
  const record = async (meta: CallMeta, action: string, args: unknown, failure?: { code: string; category: string }): Promise<void> => {
    if (meta.audited) return;
    try {
      await deps.audit.append(auditRecordOf(deps, principal, meta, action, args, failure));
    } catch (e: unknown) {
      // Only after shutdown began; the log keeps the event the table could not take.
      deps.log.error({ err: e, requestId: meta.requestId, action, outcome: failure ? failure.code : 'success' }, 'audit event not recorded');
    }
  };

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const requestId = newRequestId();
    const tool = byName.get(request.params.name);
    const client = server.getClientVersion();
    if (!tool) {
      const meta = { requestId, clientName: client?.name, clientVersion: client?.version };
      await record(meta, 'unknown_tool', { name: request.params.name }, { code: 'unknown_tool', category: 'invalid_input' });
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}". Call tools/list.`);
    }
    const log = deps.log.child({ requestId, tool: tool.name, tenantId: principal.tenantId, principalId: principal.principalId });
    const progressToken = request.params._meta?.progressToken;
    const ctx: ToolContext = {
      principal,
      meta: { requestId, clientName: client?.name, clientVersion: client?.version, signal: extra.signal },
      service: deps.service,
      registry: deps.registry,
      signal: extra.signal,
      progress: async (progress, total, message) => {
        if (progressToken === undefined) return;
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, ...(total === undefined ? {} : { total }), ...(message ? { message } : {}) },
        });
      },
    };
    const started = Date.now();
    try {
      // NUL and lone surrogates would otherwise reach Postgres text/jsonb and fail there as internal errors.
      checkStorableStrings(request.params.arguments ?? {}, `arguments to ${tool.name}`);
      const parsed = tool.input.safeParse(request.params.arguments ?? {});
      if (!parsed.success) throw InvalidInputError.fromZod(`arguments to ${tool.name}`, parsed.error.issues);
      const result = await tool.handler(parsed.data, ctx);
      log.info({ ms: Date.now() - started }, 'tool call succeeded');
      await record(ctx.meta, tool.name, request.params.arguments ?? {});
      return result;
    } catch (e: unknown) {
      const result = toToolError(e, requestId);
      const payload = result.structuredContent as { category: string; code: string };
      const level = payload.category === 'internal' ? 'error' : 'info';
      log[level]({ err: e, ms: Date.now() - started, code: payload.code, category: payload.category }, 'tool call failed');
      await record(ctx.meta, tool.name, request.params.arguments ?? {}, payload);
      return result;
    }
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'job://{jobId}',
        name: 'job',
        title: 'A Stepwise job',
        description: 'The full record of a job: status, result and every step checkpoint.',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [] }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const m = /^job:\/\/(.+)$/.exec(request.params.uri);
    const id = JobIdSchema.safeParse(m?.[1]);
    const client = server.getClientVersion();
    const meta: CallMeta = { requestId: newRequestId(), clientName: client?.name, clientVersion: client?.version };
    const args = { uri: request.params.uri, ...(id.success ? { jobId: id.data } : {}) };
    if (!id.success) {
      await record(meta, 'read_resource', args, { code: 'invalid_input', category: 'invalid_input' });
      throw new McpError(ErrorCode.InvalidParams, `Not a job resource: ${request.params.uri}`);
    }
    try {
      const job = await deps.service.get(principal, id.data);
      const steps = await deps.service.steps(principal, id.data);
      const body = { ...toJobView(job), input: job.input, steps: steps.map((s) => toStepView(s, true)) };
      await record(meta, 'read_resource', args);
      return { contents: [{ uri: request.params.uri, mimeType: 'application/json', text: JSON.stringify(body, null, 2) }] };
    } catch (e: unknown) {
      const info = toToolError(e, 'resource').structuredContent as { message: string; category: string; code: string };
      await record(meta, 'read_resource', args, info);
      // -32002 is MCP's "resource not found".
      throw new McpError(info.category === 'not_found' ? -32002 : ErrorCode.InternalError, info.message);
    }
  });

  return server;
}
