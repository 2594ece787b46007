import { z } from 'zod';
import { JobStatusSchema } from '../job/status.js';

/** What workers publish on a job's channel when it moves or makes progress. */
export const JobUpdateSchema = z.object({
  jobId: z.string(),
  status: JobStatusSchema,
  progress: z
    .object({ done: z.number(), total: z.number().nullable(), message: z.string().nullable() })
    .nullable(),
  /** The whole job's completion, 0..1, for progress bars (steps done plus the current step's share). */
  overall: z.number().min(0).max(1).nullable().default(null),
  at: z.number(),
});
export type JobUpdate = z.infer<typeof JobUpdateSchema>;
export type JobUpdateInput = z.input<typeof JobUpdateSchema>;

export const CancelNoticeSchema = z.object({ jobId: z.string(), reason: z.string().nullable() });
export type CancelNotice = z.infer<typeof CancelNoticeSchema>;
