import { GetJobStatusInputSchema, GetJobStatusOutputSchema, isTerminal, toJobView, toStepView } from '@stepwise/shared';
import { toToolSuccess } from '../to-tool-result.js';
import { defineTool } from './tool.js';
import { waitWithProgress } from './wait-with-progress.js';

export const getJobStatusTool = defineTool({
  name: 'get_job_status',
  title: 'Get a job\'s status',
  description: [
    'Returns a job\'s status (pending, running, waiting, retrying, succeeded, failed, cancelled), progress in words, the current step, attempts, and — once succeeded — its result.',
    'Set `waitSeconds` (max 25) to wait for the job to finish: the call returns as soon as it does, with progress notifications meanwhile if you passed a progressToken.',
    'While the job is not finished, ask again after `pollAfterMs`. `includeSteps: true` adds each step\'s checkpoint.',
    'A `not_found` error means the id is wrong or not yours; use list_jobs.',
  ].join(' '),
  input: GetJobStatusInputSchema,
  output: GetJobStatusOutputSchema,
  annotations: { title: 'Get a job\'s status', readOnlyHint: true, openWorldHint: false },
  async handler(args, ctx) {
    const job = args.waitSeconds ? await waitWithProgress(ctx, args.jobId, args.waitSeconds) : await ctx.service.get(ctx.principal, args.jobId);
    const view = toJobView(job);
    const steps = args.includeSteps ? (await ctx.service.steps(ctx.principal, job.id)).map((s) => toStepView(s, true)) : undefined;
    const links = isTerminal(job.status)
      ? [{ type: 'resource_link' as const, uri: `job://${job.id}`, name: job.id, mimeType: 'application/json', description: `Full record of ${job.type} job ${job.id}` }]
      : [];
    return toToolSuccess({ ...view, ...(steps ? { steps } : {}) }, `${job.id} (${job.type}) — ${view.summary}`, links);
  },
});
