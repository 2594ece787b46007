import { z } from 'zod';
import { JobIdSchema } from '../ids.js';
import { JobStatusSchema, StepEffectSchema, StepStatusSchema } from '../job/status.js';
import { ErrorInfoSchema } from '../errors/stepwise-error.js';
import { ErrorCategorySchema } from '../errors/error-category.js';

// Zod schemas for every MCP tool's input and output (DESIGN §9). The server derives the JSON
// Schemas in tools/list from these, and parses every call with them.

/** MCP clients commonly time out at 60 s; a wait must end well before that. */
export const MAX_WAIT_SECONDS = 25;
export const MAX_PAGE_SIZE = 100;

const waitSeconds = z
  .number()
  .min(0)
  .max(MAX_WAIT_SECONDS)
  .optional()
  .describe(`Block up to this many seconds (max ${MAX_WAIT_SECONDS}) until the job finishes; returns early when it does.`);

export const StartJobInputSchema = z.object({
  type: z.string().min(1).max(128).describe('The job type, from list_job_types.'),
  input: z.unknown().describe("The job's input; its schema depends on `type`."),
  idempotencyKey: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('Reuse the same key when retrying a call: you get the same job back instead of a second one.'),
  waitSeconds,
  deadlineSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .optional()
    .describe('The whole job must finish within this many seconds of now, or it is stopped (see onDeadline).'),
  onDeadline: z.enum(['fail', 'cancel']).optional().describe('What a passed deadline does to the job: fail (default) or cancel.'),
});
export type StartJobInput = z.infer<typeof StartJobInputSchema>;

export const GetJobStatusInputSchema = z.object({
  jobId: JobIdSchema.describe('The id returned by start_job (job_…).'),
  waitSeconds,
  includeSteps: z.boolean().optional().describe('Include the per-step checkpoints (name, status, attempt, output).'),
});
export type GetJobStatusInput = z.infer<typeof GetJobStatusInputSchema>;

export const CancelJobInputSchema = z.object({
  jobId: JobIdSchema,
  reason: z.string().max(500).optional().describe('Why, in words; recorded in the job history.'),
});
export type CancelJobInput = z.infer<typeof CancelJobInputSchema>;

export const ListJobsInputSchema = z.object({
  status: JobStatusSchema.optional(),
  type: z.string().max(128).optional(),
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe(`Page size, default 20, max ${MAX_PAGE_SIZE}.`),
  cursor: JobIdSchema.optional().describe('nextCursor from the previous page.'),
});
export type ListJobsInput = z.infer<typeof ListJobsInputSchema>;

export const ListJobTypesInputSchema = z.object({});

export const ProgressViewSchema = z.object({
  done: z.number(),
  total: z.number().nullable(),
  percent: z.number().nullable(),
  message: z.string().nullable(),
  updatedAt: z.string(),
});

export const JobViewSchema = z.object({
  jobId: z.string(),
  type: z.string(),
  status: JobStatusSchema,
  /** Words for a person: what is happening and what to do next. */
  summary: z.string(),
  progress: ProgressViewSchema.nullable(),
  currentStep: z.string().nullable(),
  stepsDone: z.number().int(),
  stepsTotal: z.number().int(),
  attempt: z.number().int(),
  maxAttempts: z.number().int(),
  nextRetryAt: z.string().nullable(),
  waitingReason: z.string().nullable(),
  /** For needs_approval: `{ step, action, parameters, impact }` — what the job is about to do. */
  waitingDetails: z.unknown().optional(),
  /** A decision on the waiting job was recorded; a worker is resuming it. */
  resuming: z.boolean(),
  cancelRequested: z.boolean(),
  result: z.unknown().optional(),
  error: ErrorInfoSchema.nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
  /** When to ask again, if the job is still going. Null once it is finished. */
  pollAfterMs: z.number().int().nullable(),
});
export type JobView = z.infer<typeof JobViewSchema>;

export const StepViewSchema = z.object({
  name: z.string(),
  status: StepStatusSchema,
  effect: StepEffectSchema,
  attempt: z.number().int(),
  idempotencyKey: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  output: z.unknown().optional(),
  error: ErrorInfoSchema.nullable(),
});
export type StepView = z.infer<typeof StepViewSchema>;

export const StartJobOutputSchema = JobViewSchema.extend({
  deduplicated: z.boolean().describe('true when an earlier identical call already created this job.'),
});
export type StartJobOutput = z.infer<typeof StartJobOutputSchema>;

export const GetJobStatusOutputSchema = JobViewSchema.extend({ steps: z.array(StepViewSchema).optional() });
export type GetJobStatusOutput = z.infer<typeof GetJobStatusOutputSchema>;

export const CancelJobOutputSchema = JobViewSchema.extend({
  outcome: z
    .enum(['cancelled', 'cancel_requested', 'already_finished'])
    .describe('cancelled: done now; cancel_requested: the running step is being stopped; already_finished: nothing changed.'),
});
export type CancelJobOutput = z.infer<typeof CancelJobOutputSchema>;

export const JobSummarySchema = z.object({
  jobId: z.string(),
  type: z.string(),
  status: JobStatusSchema,
  summary: z.string(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});
export const ListJobsOutputSchema = z.object({
  jobs: z.array(JobSummarySchema),
  nextCursor: z.string().nullable(),
});
export type ListJobsOutput = z.infer<typeof ListJobsOutputSchema>;

export const ListJobTypesOutputSchema = z.object({
  types: z.array(
    z.object({
      name: z.string(),
      title: z.string(),
      description: z.string(),
      inputSchema: z.record(z.string(), z.unknown()),
    }),
  ),
});
export type ListJobTypesOutput = z.infer<typeof ListJobTypesOutputSchema>;

/** The structuredContent of every tool error (`isError: true`). */
export const ToolErrorSchema = z.object({
  code: z.string(),
  category: ErrorCategorySchema,
  retryable: z.boolean(),
  retryAfterMs: z.number().int().nullable(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
  requestId: z.string(),
});
export type ToolError = z.infer<typeof ToolErrorSchema>;

export const RESPOND_DECISIONS = ['approve', 'reject', 'retry', 'mark_done', 'cancel'] as const;
export type RespondDecision = (typeof RESPOND_DECISIONS)[number];

export const RespondToJobInputSchema = z.object({
  jobId: JobIdSchema,
  decision: z
    .enum(RESPOND_DECISIONS)
    .describe(
      'For needs_approval (a step asks permission; see waitingDetails: action, parameters, impact): approve or reject. ' +
        'For a job waiting with reason needs_confirmation (an unsafe step was interrupted and may or may not have taken effect): ' +
        'retry = you checked it did NOT happen, run the step again; mark_done = it DID happen, continue with `output` as its result; cancel = stop the job. ' +
        'For needs_reauthorization: retry once the credential is fixed, or cancel. ' +
        'For schema_changed or tool_unavailable (a downstream MCP tool changed or disappeared; see waitingDetails): retry once it is fixed, or cancel.',
    ),
  output: z.unknown().optional().describe('With mark_done: the step output to record (what the step would have returned).'),
  note: z.string().max(1000).optional().describe('Why, in words; kept in the job history and audit log.'),
});
export type RespondToJobInput = z.infer<typeof RespondToJobInputSchema>;

export const RespondToJobOutputSchema = JobViewSchema.extend({ decision: z.enum(RESPOND_DECISIONS) });
export type RespondToJobOutput = z.infer<typeof RespondToJobOutputSchema>;

export const RetryJobInputSchema = z.object({
  jobId: JobIdSchema,
  note: z.string().max(1000).optional().describe('Why it should work now (e.g. "credential fixed"); kept in the history.'),
});
export type RetryJobInput = z.infer<typeof RetryJobInputSchema>;
export const RetryJobOutputSchema = JobViewSchema;

/** get_job_history pages hold at most this many entries. */
export const MAX_HISTORY_PAGE_SIZE = 200;

export const GetJobHistoryInputSchema = z.object({
  jobId: JobIdSchema,
  limit: z.number().int().min(1).max(MAX_HISTORY_PAGE_SIZE).optional().describe(`Page size, default 50, max ${MAX_HISTORY_PAGE_SIZE}.`),
  cursor: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be a nextCursor returned by get_job_history')
    .optional()
    .describe('nextCursor from the previous page.'),
});
export type GetJobHistoryInput = z.infer<typeof GetJobHistoryInputSchema>;

export const JobHistoryEntrySchema = z.object({
  /** `event`: a state change recorded with the job (transition, decision, retry, cancel request); `audit`: a call that targeted it. */
  source: z.enum(['event', 'audit']),
  at: z.string(),
  /** Event kind (`created`, `transition`, `decision`, `cancel_requested`, …) or the audited action (`get_job_status`, …). */
  kind: z.string(),
  fromStatus: z.string().nullable(),
  toStatus: z.string().nullable(),
  /** Who: the calling principal for audit entries, the worker for events a worker wrote. */
  actor: z.string().nullable(),
  /** Audit entries: success, error or denied. */
  outcome: z.string().nullable(),
  errorCode: z.string().nullable(),
  reason: z.string().nullable(),
  details: z.unknown().nullable(),
});
export type JobHistoryEntry = z.infer<typeof JobHistoryEntrySchema>;

export const GetJobHistoryOutputSchema = z.object({
  jobId: z.string(),
  entries: z.array(JobHistoryEntrySchema),
  nextCursor: z.string().nullable(),
});
