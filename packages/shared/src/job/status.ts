import { z } from 'zod';

/** The single source of the job statuses: pgEnum, zod enum and TS type derive from it. */
export const JOB_STATUSES = [
  'pending',
  'running',
  'waiting',
  'retrying',
  'succeeded',
  'failed',
  'cancelled',
] as const;

export type JobStatus = (typeof JOB_STATUSES)[number];
export const JobStatusSchema = z.enum(JOB_STATUSES);

export const TERMINAL_STATUSES = ['succeeded', 'failed', 'cancelled'] as const satisfies readonly JobStatus[];
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

export function isTerminal(status: JobStatus): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly JobStatus[]).includes(status);
}

/** Step checkpoint states (DESIGN §2, `job_steps.status`). */
export const STEP_STATUSES = ['pending', 'started', 'succeeded', 'failed', 'skipped'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];
export const StepStatusSchema = z.enum(STEP_STATUSES);

/** How a step's external effect behaves when it is run again (DESIGN §2). */
export const STEP_EFFECTS = ['none', 'idempotent', 'unsafe'] as const;
export type StepEffect = (typeof STEP_EFFECTS)[number];
export const StepEffectSchema = z.enum(STEP_EFFECTS);
