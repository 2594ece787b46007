import { RetryJobInputSchema, RetryJobOutputSchema, toJobView } from '@stepwise/shared';
import { toToolSuccess } from '../to-tool-result.js';
import { defineTool } from './tool.js';

export const retryJobTool = defineTool({
  name: 'retry_job',
  title: 'Retry a failed job',
  description: [
    'Re-runs a job in status `failed` from the step that failed. Steps that already succeeded are kept and not run again;',
    'the re-run steps get fresh idempotency keys. Use it after fixing what the error said (input outside your control, a credential, a downstream outage).',
    'Jobs in any other status give a `conflict` error. Follow the job with get_job_status.',
  ].join(' '),
  input: RetryJobInputSchema,
  output: RetryJobOutputSchema,
  annotations: { title: 'Retry a failed job', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  async handler(args, ctx) {
    const job = await ctx.service.retry(ctx.principal, args.jobId, args.note, ctx.meta);
    const view = toJobView(job);
    return toToolSuccess(view, `Retrying ${job.id} from step "${job.currentStep ?? '?'}" — ${view.summary}`);
  },
});
