import { CancelJobInputSchema, CancelJobOutputSchema, toJobView } from '@stepwise/shared';
import { toToolSuccess } from '../to-tool-result.js';
import { defineTool } from './tool.js';

export const cancelJobTool = defineTool({
  name: 'cancel_job',
  title: 'Cancel a job',
  description: [
    'Cancels a job. Safe to call more than once. A queued job is cancelled at once (`outcome: cancelled`);',
    'a running job is asked to stop — its current step is interrupted within about a second and the job ends `cancelled` (`outcome: cancel_requested`; confirm with get_job_status).',
    'A finished job is left as it is (`outcome: already_finished`). Steps that already completed are not undone.',
  ].join(' '),
  input: CancelJobInputSchema,
  output: CancelJobOutputSchema,
  annotations: { title: 'Cancel a job', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async handler(args, ctx) {
    const { job, outcome } = await ctx.service.cancel(ctx.principal, args.jobId, args.reason, ctx.meta);
    const view = toJobView(job);
    const text =
      outcome === 'cancelled'
        ? `Cancelled ${job.id}.`
        : outcome === 'cancel_requested'
          ? `Asked the worker to stop ${job.id}; it ends as cancelled at the current step.`
          : `${job.id} had already finished (${job.status}); nothing changed.`;
    return toToolSuccess({ ...view, outcome }, text);
  },
});
