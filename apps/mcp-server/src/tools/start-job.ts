import { z } from 'zod';
import type { JobRegistry } from '@stepwise/shared';
import { StartJobInputSchema, StartJobOutputSchema, toJobView } from '@stepwise/shared';
import { toToolSuccess } from '../to-tool-result.js';
import { defineTool } from './tool.js';
import { waitWithProgress } from './wait-with-progress.js';

/**
 * The input JSON Schema with every job type's own input schema under `input.anyOf`, so a model
 * can discover each type's fields from tools/list alone. The union stays inside `input` because
 * several clients reject oneOf/anyOf at the top level of a tool schema.
 */
function startJobJsonSchema(registry: JobRegistry): Record<string, unknown> {
  const base = z.toJSONSchema(StartJobInputSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const properties = { ...(base.properties as Record<string, unknown>) };
  const types = registry.list();
  properties.type = { type: 'string', enum: types.map((t) => t.name), description: 'The job type. Its input schema is the matching entry of `input`.' };
  properties.input = {
    description: 'The job input. Use the schema whose title matches `type`.',
    anyOf: types.map((t) => {
      const s = z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      delete s.$schema;
      return { ...s, title: t.name, description: t.description };
    }),
  };
  return { type: 'object', properties, required: ['type', 'input'], additionalProperties: false };
}

export const startJobTool = defineTool({
  name: 'start_job',
  title: 'Start a durable job',
  description: [
    'Starts a long-running job that survives disconnects, crashes and restarts, and returns at once with its jobId and status.',
    'Call list_job_types first to see the types and their inputs (they are also in this tool\'s `input` schema).',
    'Pass an `idempotencyKey` you invent (e.g. a UUID) and reuse it if you must retry this call: you get the same job back (`deduplicated: true`), never a second one. Reusing a key with a different input is an `idempotency_conflict` error.',
    'Set `waitSeconds` (max 25) to block until the job finishes or the wait ends; otherwise follow it with get_job_status.',
    'On error, the result has `category`: invalid_input → fix the input; transient/rate_limited → retry the same call after retryAfterMs; forbidden → do not retry.',
  ].join(' '),
  input: StartJobInputSchema,
  output: StartJobOutputSchema,
  annotations: { title: 'Start a durable job', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  inputJsonSchema: startJobJsonSchema,
  async handler(args, ctx) {
    const { job, deduplicated } = await ctx.service.start(ctx.principal, args, ctx.meta);
    const final = args.waitSeconds ? await waitWithProgress(ctx, job.id, args.waitSeconds) : job;
    const view = { ...toJobView(final), deduplicated };
    const text = `${deduplicated ? 'Existing job' : 'Started job'} ${final.id} (${final.type}) — ${view.summary}`;
    return toToolSuccess(view, text);
  },
});
