import type { JobType } from '@stepwise/shared';
import { defineJob } from '@stepwise/shared';
import { McpChainInputSchema } from './chain-schemas.js';
import type { McpCallOutput, McpChainInput } from './chain-schemas.js';
import { chainStep } from './call-step.js';
import type { DownstreamRegistry } from './downstream-registry.js';
import { enrichChain, validateChain } from './plan-chain.js';

/**
 * `mcp.chain` (DESIGN §12): a plan of tools/call against downstream MCP servers named in config,
 * one plan step per chain step, checkpointed, retried, approvable and cancellable like any job.
 * Replay safety and approval come from each tool's annotations, captured at start_job.
 */
export function createMcpChainJob(registry: DownstreamRegistry): JobType {
  const servers = registry.names();
  return defineJob({
    name: 'mcp.chain',
    title: 'Run a chain of MCP tool calls',
    description:
      'Runs a sequence of tool calls on other MCP servers as one durable job: each call is checkpointed, so after a crash, ' +
      'timeout or restart the chain resumes where it stopped and completed calls are never repeated. ' +
      `Servers available: ${servers.length > 0 ? servers.join(', ') : 'none are configured'}. ` +
      'Input: {steps: [{id, server, tool, arguments, dependsOn?, timeoutMs?}], approvals?}. A later step can use an earlier ' +
      'result with {{steps.<id>.<path>}} in any argument string, e.g. "{{steps.read.structuredContent.content}}". The plan is ' +
      'checked before the job is created (servers, tools, templates). Replay safety comes from the tool annotations: read-only ' +
      'calls are retried freely, idempotent ones retried with the same _meta.idempotencyKey, others never replayed blindly ' +
      '(the job waits with needs_confirmation). Tools annotated destructive wait for approval (needs_approval) unless ' +
      'approvals is skip_destructive or the server config says otherwise. Other waits: schema_changed (the tool\'s input ' +
      'schema changed and the arguments no longer fit), tool_unavailable, needs_reauthorization (the server refused its ' +
      'credential); answer retry with respond_to_job once fixed, or cancel. The result lists each step\'s server, tool, ' +
      'request id and CallToolResult (or a blob reference when large).',
    input: McpChainInputSchema,
    steps: (input: McpChainInput) => input.steps.map((step) => chainStep(registry, step)),
    validate: (input, ctx) => validateChain(registry, input, ctx),
    enrich: (input, ctx) => enrichChain(registry, input, ctx),
    result: (outputs, input) => ({
      steps: input.steps.map((s) => {
        const o = outputs[s.id] as Partial<McpCallOutput> | undefined;
        return {
          id: s.id,
          server: s.server,
          tool: s.tool,
          requestId: o?.requestId ?? null,
          result: o && 'resultSha256' in o ? (o.result ?? null) : (o ?? null),
          resultRef: o?.resultRef ?? null,
        };
      }),
    }),
  });
}
