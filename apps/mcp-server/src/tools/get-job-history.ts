import { GetJobHistoryInputSchema, GetJobHistoryOutputSchema } from '@stepwise/shared';
import { toToolSuccess } from '../to-tool-result.js';
import { defineTool } from './tool.js';

export const getJobHistoryTool = defineTool({
  name: 'get_job_history',
  title: 'Get a job\'s history',
  description: [
    'Returns what happened to a job, oldest first: its state transitions, approval decisions, retries and cancel requests (`source: "event"`),',
    'and every call that targeted it, with who made it and the outcome (`source: "audit"`).',
    'Pages hold up to `limit` entries (default 50, max 200); pass `nextCursor` as `cursor` for the next page.',
    'A `not_found` error means the id is wrong or not yours.',
  ].join(' '),
  input: GetJobHistoryInputSchema,
  output: GetJobHistoryOutputSchema,
  annotations: { title: 'Get a job\'s history', readOnlyHint: true, openWorldHint: false },
  async handler(args, ctx) {
    const { entries, nextCursor } = await ctx.service.history(ctx.principal, { jobId: args.jobId, limit: args.limit ?? 50, cursor: args.cursor });
    const text =
      entries.length === 0
        ? `No history for ${args.jobId}.`
        : entries
            .map((e) => `${e.at} ${e.kind}${e.toStatus ? ` ${e.fromStatus ?? '-'}→${e.toStatus}` : ''}${e.outcome ? ` ${e.outcome}` : ''}${e.actor ? ` by ${e.actor}` : ''}`)
            .join('\n');
    return toToolSuccess({ jobId: args.jobId, entries, nextCursor }, nextCursor ? `${text}\n(more: pass cursor)` : text);
  },
});
