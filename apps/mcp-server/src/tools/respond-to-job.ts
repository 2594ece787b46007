import { RespondToJobInputSchema, RespondToJobOutputSchema, toJobView } from '@stepwise/shared';
import { toToolSuccess } from '../to-tool-result.js';
import { defineTool } from './tool.js';

export const respondToJobTool = defineTool({
  name: 'respond_to_job',
  title: 'Decide on a waiting job',
  description: [
    'Resolves a job in status `waiting` (see its `waitingReason`). Needs the jobs:approve scope.',
    'needs_confirmation: a step with an external effect that cannot be deduplicated was interrupted, so nobody knows whether it happened.',
    'Check the outside system first, then answer retry (it did not happen: run it again), mark_done with `output` (it did happen: continue), or cancel.',
    'needs_reauthorization: fix the credential, then retry; or cancel.',
    'Ask the user before deciding if you cannot check yourself. The decision is recorded with your identity and note.',
  ].join(' '),
  input: RespondToJobInputSchema,
  output: RespondToJobOutputSchema,
  annotations: { title: 'Decide on a waiting job', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async handler(args, ctx) {
    const job = await ctx.service.respond(ctx.principal, args, ctx.meta);
    const view = toJobView(job);
    return toToolSuccess({ ...view, decision: args.decision }, `Recorded "${args.decision}" for ${job.id} — ${view.summary}`);
  },
});
