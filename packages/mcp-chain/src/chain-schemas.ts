import { z } from 'zod';
import { BlobRefSchema, STEP_EFFECTS } from '@stepwise/shared';
import { findRefs, TemplateSyntaxError } from './template.js';

/** Chain step ids double as plan step names; no dots, so `steps.<id>.<path>` is unambiguous. */
export const CHAIN_STEP_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * What Stepwise learned about a step's tool at start_job (the `enrich` hook): the tool's
 * annotations turned into an effect and an approval, and its input schema as it was then. The
 * plan is computed from this alone, so it is the same on every resume.
 */
export const PlannedCallSchema = z
  .object({
    effect: z.enum(STEP_EFFECTS),
    approval: z.enum(['required', 'none']),
    destructive: z.boolean(),
    annotations: z.record(z.string(), z.unknown()).optional(),
    inputSchemaHash: z.string(),
    inputSchema: z.record(z.string(), z.unknown()),
  })
  .strict();
export type PlannedCall = z.infer<typeof PlannedCallSchema>;

export const ChainStepSchema = z
  .object({
    id: z
      .string()
      .regex(CHAIN_STEP_ID, 'lower-case letters, digits, "_" and "-" (at most 64), starting with a letter or digit')
      .describe('Unique name of this step; later steps refer to its result as {{steps.<id>.…}}.'),
    server: z.string().min(1).describe('Name of a downstream MCP server from the Stepwise config (see the job type description).'),
    tool: z.string().min(1).describe('Name of the tool to call on that server.'),
    arguments: z
      .record(z.string(), z.unknown())
      .default({})
      .describe(
        'The tool arguments. Any string may embed {{steps.<id>.<path>}} to use an earlier step\'s result, e.g. ' +
          '"{{steps.read.structuredContent.content}}" or "{{steps.list.content[0].text}}". A string that is exactly one ' +
          'template takes the raw value (object, number, …); embedded in text it becomes text.',
      ),
    dependsOn: z.array(z.string()).optional().describe('Ids of earlier steps this one needs (steps run in list order; this documents and checks it).'),
    timeoutMs: z.number().int().min(100).max(3_600_000).optional().describe('Per-call timeout in ms (default: the server\'s callTimeoutMs, 60 s).'),
    planned: PlannedCallSchema.optional().describe('Set by Stepwise when the job is created; leave it out (anything given is replaced).'),
  })
  .strict();
export type ChainStep = z.infer<typeof ChainStepSchema>;

export const McpChainInputSchema = z
  .object({
    steps: z.array(ChainStepSchema).min(1).max(100).describe('The tool calls, in the order they run.'),
    approvals: z
      .enum(['default', 'skip_destructive'])
      .default('default')
      .describe(
        'default: a call to a tool annotated destructiveHint waits for a person\'s approval. skip_destructive: this chain ' +
          'opts out of that (servers configured to always require approval still do).',
      ),
  })
  .strict()
  .superRefine((input, ctx) => {
    const seen = new Map<string, number>();
    input.steps.forEach((step, i) => {
      if (seen.has(step.id)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'id'], message: `duplicate step id "${step.id}"` });
      for (const [j, dep] of (step.dependsOn ?? []).entries()) {
        if (!seen.has(dep)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'dependsOn', j], message: earlier(dep, step.id, input.steps) });
      }
      let refs: ReturnType<typeof findRefs>;
      try {
        refs = findRefs(step.arguments);
      } catch (e: unknown) {
        const message = e instanceof TemplateSyntaxError ? `bad template ${e.message}` : String(e);
        ctx.addIssue({ code: 'custom', path: ['steps', i, 'arguments'], message });
        refs = [];
      }
      for (const { at, ref } of refs) {
        if (!seen.has(ref.step)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'arguments', ...at], message: `${ref.source}: ${earlier(ref.step, step.id, input.steps)}` });
      }
      if (!seen.has(step.id)) seen.set(step.id, i);
    });
  });
export type McpChainInput = z.infer<typeof McpChainInputSchema>;

function earlier(ref: string, self: string, steps: readonly { id: string }[]): string {
  if (ref === self) return `step "${self}" cannot refer to itself`;
  return steps.some((s) => s.id === ref) ? `step "${ref}" runs later; refer only to earlier steps` : `no step has id "${ref}"`;
}

/** What a chain step checkpoints (DESIGN §12, issue #6 item 4). */
export const McpCallOutputSchema = z.object({
  server: z.string(),
  tool: z.string(),
  effect: z.enum(STEP_EFFECTS),
  /** sha256 of the canonical JSON of the arguments as sent (templates resolved). */
  argsDigest: z.string(),
  /** The arguments as sent, with secret-looking keys redacted. */
  arguments: z.unknown(),
  /** The JSON-RPC id of the tools/call request that produced this result. */
  requestId: z.union([z.string(), z.number()]).nullable(),
  /** Also sent to the server as `_meta.idempotencyKey`. */
  idempotencyKey: z.string(),
  attempt: z.number().int(),
  /** The tool's inputSchema hash when the job was planned, and when this call was made. */
  plannedInputSchemaHash: z.string().nullable(),
  inputSchemaHash: z.string(),
  schemaChanged: z.boolean(),
  /** The CallToolResult, inline when small; otherwise null and `resultRef` points to it. */
  result: z.record(z.string(), z.unknown()).nullable(),
  resultRef: BlobRefSchema.nullable(),
  resultSha256: z.string(),
  durationMs: z.number().int(),
});
export type McpCallOutput = z.infer<typeof McpCallOutputSchema>;
