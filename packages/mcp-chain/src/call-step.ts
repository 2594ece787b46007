import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalRequest, BlobRef, BlobStore, StepContext, StepDefinition } from '@stepwise/shared';
import { BlobRefSchema, canonicalJson, InvalidInputError, sha256Hex, WaitRequestedError } from '@stepwise/shared';
import type { ChainStep, McpCallOutput, McpChainInput } from './chain-schemas.js';
import type { DownstreamRegistry, RequestId } from './downstream-registry.js';
import { classifyCallError, classifyToolErrorResult } from './call-errors.js';
import { redactSecrets } from './redact.js';
import { checkArguments, diffSchemas, schemaHash } from './schema-check.js';
import { resolveTemplates, UnresolvedTemplateError } from './template.js';

/** Results above this many bytes of JSON go to the blob store; the checkpoint keeps a reference. */
export const INLINE_RESULT_LIMIT = 32 * 1024;

/**
 * The plan step for one chain step: effect and approval come from what was planned at start_job
 * (the tool's annotations and the config). A step planned without that (never through start_job)
 * is treated as unsafe and needing approval: the conservative answer.
 */
export function chainStep(registry: DownstreamRegistry, step: ChainStep): StepDefinition<McpChainInput, McpCallOutput> {
  const def: StepDefinition<McpChainInput, McpCallOutput> = {
    name: step.id,
    effect: step.planned?.effect ?? 'unsafe',
    approval: step.planned?.approval ?? 'required',
    run: (ctx) => callStep(registry, step, ctx),
  };
  if (def.approval === 'required') def.describeApproval = (ctx) => describeCall(step, ctx.idempotencyKey);
  return def;
}

/** What the approver sees: the call, its arguments (secrets redacted, templates as written) and why it needs them. */
export function describeCall(step: ChainStep, idempotencyKey: string): ApprovalRequest {
  const a = step.planned?.annotations ?? {};
  const title = typeof a.title === 'string' ? ` (${a.title})` : '';
  const preview = canonicalJson(redactSecrets(step.arguments));
  return {
    action: `call ${step.tool}${title} on MCP server "${step.server}"`,
    parameters: { server: step.server, tool: step.tool, arguments: preview.length > 2000 ? `${preview.slice(0, 2000)}…` : JSON.parse(preview), idempotencyKey },
    impact: step.planned?.destructive
      ? 'The tool declares it may destroy or overwrite data (destructiveHint).'
      : step.planned
        ? 'The server is configured to ask before every call.'
        : 'The tool was not inspected when the job was created, so Stepwise asks before calling it.',
  };
}

/** The parts of a step context a chain step uses. */
export type CallStepContext = Pick<StepContext<McpChainInput>, 'jobId' | 'attempt' | 'outputs' | 'signal' | 'progress' | 'idempotencyKey' | 'log' | 'blobs'>;

/**
 * Runs one chain step: re-lists the server's tools (a removed tool → waiting `tool_unavailable`;
 * a changed input schema that the arguments no longer satisfy → waiting `schema_changed`),
 * resolves templates against earlier results, calls the tool with the step's idempotency key in
 * `_meta`, and returns the checkpoint record. Downstream failures are classified; an unsafe call
 * whose outcome is unknown (connection lost or timed out after sending) → waiting
 * `needs_confirmation`, never a blind retry.
 */
export async function callStep(registry: DownstreamRegistry, step: ChainStep, ctx: CallStepContext): Promise<McpCallOutput> {
  const where = { server: step.server, tool: step.tool };
  const effect = step.planned?.effect ?? 'unsafe';
  const server = registry.server(step.server);

  const tool = await registry.findTool(step.server, step.tool, { signal: ctx.signal, maxAgeMs: 0 });
  if (!tool) {
    throw new WaitRequestedError('tool_unavailable', 'not_found', `MCP server "${step.server}" no longer offers tool "${step.tool}". Restore it, then answer retry; or cancel the job.`, {
      details: where,
    });
  }

  let args: Record<string, unknown>;
  try {
    args = (await resolveTemplates(step.arguments, (id) => resultOf(ctx.outputs[id], ctx.blobs))) as Record<string, unknown>;
  } catch (e: unknown) {
    if (e instanceof UnresolvedTemplateError) {
      throw new InvalidInputError(`Step "${step.id}": ${e.message}.`, [{ path: ['input', 'steps', step.id, 'arguments', ...e.at].join('.'), message: e.message }]);
    }
    throw e;
  }

  const plannedHash = step.planned?.inputSchemaHash ?? null;
  const currentHash = schemaHash(tool.inputSchema);
  const schemaChanged = plannedHash !== null && plannedHash !== currentHash;
  if (schemaChanged) {
    const check = checkArguments(tool.inputSchema, args);
    if (!check.valid) {
      throw new WaitRequestedError(
        'schema_changed',
        'invalid_input',
        `The input schema of ${step.tool} on MCP server "${step.server}" changed since the job was planned, and the arguments no longer fit: ${check.message}. ` +
          'Fix the server (or cancel and start a corrected chain), then answer retry.',
        {
          details: {
            ...where,
            plannedInputSchemaHash: plannedHash,
            currentInputSchemaHash: currentHash,
            validation: check.message,
            diff: diffSchemas(step.planned?.inputSchema, tool.inputSchema),
          },
        },
      );
    }
    ctx.log.info({ ...where, plannedHash, currentHash }, 'tool schema changed; arguments still valid');
  }

  ctx.progress(0, null, `calling ${step.tool} on ${step.server}`);
  let requestId: RequestId | null = null;
  const started = Date.now();
  let result: CallToolResult;
  try {
    result = await registry.callTool(
      step.server,
      { name: step.tool, arguments: args, _meta: { idempotencyKey: ctx.idempotencyKey } },
      {
        signal: ctx.signal,
        timeoutMs: step.timeoutMs ?? server.callTimeoutMs,
        onRequestId: (id) => {
          requestId = id;
          ctx.log.debug({ ...where, requestId: id }, 'downstream call sent');
        },
        onprogress: (p) => ctx.progress(p.progress, p.total ?? null, `${step.tool}: ${p.message ?? `${p.progress}${p.total ? `/${p.total}` : ''}`}`),
      },
    );
  } catch (e: unknown) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const c = classifyCallError(e, where, requestId !== null);
    if (c.ambiguous && effect === 'unsafe') {
      throw new WaitRequestedError(
        'needs_confirmation',
        c.error.category,
        `${step.tool} on MCP server "${step.server}" may or may not have taken effect (${c.error.message}). ` +
          'Check the server: answer mark_done with the tool result if it did, retry if it did not.',
        { details: { ...where, requestId, idempotencyKey: ctx.idempotencyKey, error: c.error.toInfo() } },
      );
    }
    throw c.error;
  }

  if (result.isError) {
    const error = classifyToolErrorResult(result, where);
    if (error.category === 'unauthorized') registry.evict(step.server);
    throw error;
  }

  const json = canonicalJson(result);
  const resultSha256 = sha256Hex(json);
  let resultRef: BlobRef | null = null;
  if (json.length > INLINE_RESULT_LIMIT) resultRef = await ctx.blobs.put(`mcp-chain/${ctx.jobId}/${step.id}-result.json`, json, 'application/json');
  return {
    ...where,
    effect,
    argsDigest: sha256Hex(canonicalJson(args)),
    arguments: redactSecrets(args),
    requestId,
    idempotencyKey: ctx.idempotencyKey,
    attempt: ctx.attempt,
    plannedInputSchemaHash: plannedHash,
    inputSchemaHash: currentHash,
    schemaChanged,
    result: resultRef ? null : (result as Record<string, unknown>),
    resultRef,
    resultSha256,
    durationMs: Date.now() - started,
  };
}

/**
 * The downstream result of an earlier step, for templates: from its checkpoint record (loading a
 * spilled result from the blob store), or the output itself when a person recorded the step as
 * done (respond_to_job mark_done with the tool's result).
 */
export async function resultOf(output: unknown, blobs: BlobStore): Promise<unknown> {
  if (typeof output !== 'object' || output === null || !('resultSha256' in output)) return output;
  const record = output as Partial<McpCallOutput>;
  const ref = BlobRefSchema.safeParse(record.resultRef);
  if (ref.success) return JSON.parse((await blobs.get(ref.data)).toString('utf8')) as unknown;
  return record.result;
}
