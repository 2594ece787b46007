import { ListJobsInputSchema, ListJobsOutputSchema, summarizeJob } from '@stepwise/shared';
import { toToolSuccess } from '../to-tool-result.js';
import { defineTool } from './tool.js';

export const listJobsTool = defineTool({
  name: 'list_jobs',
  title: 'List jobs',
  description:
    'Lists your jobs, newest first, optionally filtered by `status` and `type`. Pages hold up to `limit` (default 20, max 100); pass `nextCursor` as `cursor` for the next page.',
  input: ListJobsInputSchema,
  output: ListJobsOutputSchema,
  annotations: { title: 'List jobs', readOnlyHint: true, openWorldHint: false },
  async handler(args, ctx) {
    const limit = args.limit ?? 20;
    const { jobs, hasMore } = await ctx.service.list(ctx.principal, { status: args.status, type: args.type, limit, before: args.cursor });
    const out = {
      jobs: jobs.map((j) => ({
        jobId: j.id,
        type: j.type,
        status: j.status,
        summary: summarizeJob(j),
        createdAt: j.createdAt.toISOString(),
        finishedAt: j.finishedAt ? j.finishedAt.toISOString() : null,
      })),
      nextCursor: hasMore ? (jobs[jobs.length - 1]?.id ?? null) : null,
    };
    const text = jobs.length === 0 ? 'No jobs match.' : out.jobs.map((j) => `${j.jobId} ${j.type} ${j.status}`).join('\n');
    return toToolSuccess(out, text);
  },
});
