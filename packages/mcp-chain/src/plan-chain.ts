import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { InputIssue, ValidateContext } from '@stepwise/shared';
import { InvalidInputError, StepwiseError } from '@stepwise/shared';
import type { McpChainInput, PlannedCall } from './chain-schemas.js';
import type { DownstreamRegistry } from './downstream-registry.js';
import { callPolicy } from './step-policy.js';
import { checkArguments, schemaHash } from './schema-check.js';
import { findRefs } from './template.js';
import type { PathKey } from './template.js';

/** The tools/list entry of every server a chain uses, listed once per server. */
async function toolsOf(registry: DownstreamRegistry, input: McpChainInput, signal: AbortSignal): Promise<Map<string, Tool[]>> {
  const servers = [...new Set(input.steps.map((s) => s.server))].filter((s) => registry.has(s));
  const lists = await Promise.all(
    servers.map(async (server) => {
      try {
        return [server, await registry.listTools(server, { signal })] as const;
      } catch (e: unknown) {
        if (signal.aborted) throw e;
        const cause = e instanceof StepwiseError ? e : undefined;
        if (cause?.category === 'unauthorized') {
          throw new StepwiseError('downstream_unauthorized', 'unauthorized', `MCP server "${server}" refused Stepwise's credential while the chain was checked: ${cause.message} An operator must fix the server's credential in config.`, { cause: e, details: { server } });
        }
        throw new StepwiseError('downstream_unavailable', 'transient', `MCP server "${server}" could not be reached to check the chain: ${e instanceof Error ? e.message : String(e)}`, {
          cause: e,
          details: { server },
        });
      }
    }),
  );
  return new Map(lists);
}

/**
 * The `validate` hook (start_job, before anything is written): every server is configured, every
 * tool exists on its server (tools/list), every templated argument points at an earlier step and,
 * when that step's tool publishes an output schema, at a property it can have, and arguments
 * without templates satisfy the tool's input schema.
 * @throws InvalidInputError listing every problem with its path (`input.steps.2.tool`);
 *   StepwiseError transient/unauthorized when a server cannot be asked.
 */
export async function validateChain(registry: DownstreamRegistry, input: McpChainInput, ctx: ValidateContext): Promise<void> {
  const issues: InputIssue[] = [];
  const at = (...path: PathKey[]) => ['input', ...path].join('.');
  for (const [i, step] of input.steps.entries()) {
    if (!registry.has(step.server)) {
      issues.push({ path: at('steps', i, 'server'), message: `no MCP server "${step.server}" is configured (configured: ${registry.names().join(', ') || 'none'})` });
    }
  }
  const tools = await toolsOf(registry, input, ctx.signal);
  const toolOf = new Map<string, Tool>();
  for (const [i, step] of input.steps.entries()) {
    const list = tools.get(step.server);
    if (!list) continue;
    let tool = list.find((t) => t.name === step.tool);
    if (!tool) tool = await registry.findTool(step.server, step.tool, { signal: ctx.signal, maxAgeMs: 0 });
    if (!tool) {
      const names = list.map((t) => t.name);
      issues.push({
        path: at('steps', i, 'tool'),
        message: `MCP server "${step.server}" has no tool "${step.tool}" (it has: ${names.slice(0, 40).join(', ')}${names.length > 40 ? ', …' : ''})`,
      });
      continue;
    }
    toolOf.set(step.id, tool);
    const refs = findRefs(step.arguments);
    for (const { at: where, ref } of refs) {
      const problem = outputPathProblem(toolOf.get(ref.step), ref.path);
      if (problem) issues.push({ path: at('steps', i, 'arguments', ...where), message: `${ref.source}: ${problem}` });
    }
    if (refs.length === 0) {
      const check = checkArguments(tool.inputSchema, step.arguments);
      if (!check.valid) issues.push({ path: at('steps', i, 'arguments'), message: `do not match ${step.tool}'s input schema: ${check.message}` });
    }
  }
  if (issues.length > 0) {
    const first = issues[0];
    throw new InvalidInputError(
      `Invalid mcp.chain plan: ${first ? `${first.path}: ${first.message}` : ''}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}.`,
      issues,
    );
  }
}

const RESULT_KEYS = new Set(['content', 'structuredContent', 'isError', '_meta']);

/** Why `path` cannot exist in a result of `tool`, or undefined when it may. Checks what is known statically. */
function outputPathProblem(tool: Tool | undefined, path: readonly PathKey[]): string | undefined {
  const [root, key] = path;
  if (root === undefined) return undefined;
  if (typeof root !== 'string' || !RESULT_KEYS.has(root)) {
    return `a step result has content, structuredContent and isError; "${String(root)}" is none of them`;
  }
  if (root !== 'structuredContent' || key === undefined || !tool?.outputSchema) return undefined;
  const schema = tool.outputSchema as { properties?: Record<string, unknown>; additionalProperties?: unknown };
  if (!schema.properties || Object.hasOwn(schema.properties, String(key)) || schema.additionalProperties !== false) return undefined;
  return `${tool.name}'s output schema has no property "${String(key)}" (it has: ${Object.keys(schema.properties).join(', ')})`;
}

/**
 * The `enrich` hook (start_job, after validate): records, in each step, what its tool's
 * annotations and the server config say about replay safety and approval, and the tool's input
 * schema as it is now. The plan is built from these, so it never depends on a live server.
 */
export async function enrichChain(registry: DownstreamRegistry, input: McpChainInput, ctx: ValidateContext): Promise<McpChainInput> {
  const steps = await Promise.all(
    input.steps.map(async (step) => {
      const tool = await registry.findTool(step.server, step.tool, { signal: ctx.signal });
      if (!tool) throw new InvalidInputError(`MCP server "${step.server}" no longer offers tool "${step.tool}".`);
      const policy = callPolicy(tool, registry.server(step.server), step.tool, input.approvals);
      const planned: PlannedCall = {
        ...policy,
        ...(tool.annotations ? { annotations: { ...tool.annotations } } : {}),
        inputSchemaHash: schemaHash(tool.inputSchema),
        inputSchema: tool.inputSchema as Record<string, unknown>,
      };
      return { ...step, planned };
    }),
  );
  return { ...input, steps };
}
