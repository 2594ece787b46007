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
import type { JobRegistry, JobService, Logger, Principal } from '@stepwise/shared';
import { InvalidInputError, JobIdSchema, newRequestId, toJobView, toStepView, ToolErrorSchema } from '@stepwise/shared';
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

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const requestId = newRequestId();
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}". Call tools/list.`);
    const client = server.getClientVersion();
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
      const parsed = tool.input.safeParse(request.params.arguments ?? {});
      if (!parsed.success) throw InvalidInputError.fromZod(`arguments to ${tool.name}`, parsed.error.issues);
      const result = await tool.handler(parsed.data, ctx);
      log.info({ ms: Date.now() - started }, 'tool call succeeded');
      return result;
    } catch (e: unknown) {
      const result = toToolError(e, requestId);
      const payload = result.structuredContent as { category: string; code: string };
      const level = payload.category === 'internal' ? 'error' : 'info';
      log[level]({ err: e, ms: Date.now() - started, code: payload.code, category: payload.category }, 'tool call failed');
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
    if (!id.success) throw new McpError(ErrorCode.InvalidParams, `Not a job resource: ${request.params.uri}`);
    try {
      const job = await deps.service.get(principal, id.data);
      const steps = await deps.service.steps(principal, id.data);
      const body = { ...toJobView(job), input: job.input, steps: steps.map((s) => toStepView(s, true)) };
      return { contents: [{ uri: request.params.uri, mimeType: 'application/json', text: JSON.stringify(body, null, 2) }] };
    } catch (e: unknown) {
      const info = toToolError(e, 'resource').structuredContent as { message: string; category: string };
      // -32002 is MCP's "resource not found".
      throw new McpError(info.category === 'not_found' ? -32002 : ErrorCode.InternalError, info.message);
    }
  });

  return server;
}
