import type { JobId, PrincipalId, TenantId, WorkerId } from '../ids.js';
import type { ErrorInfo } from '../errors/stepwise-error.js';
import type { JobStatus, StepEffect, StepStatus } from './status.js';

/** A step as frozen into the job row at creation, so a resume runs the plan the job started with. */
export interface PlannedStep {
  name: string;
  effect: StepEffect;
}

export interface JobProgress {
  done: number;
  total: number | null;
  message: string | null;
  updatedAt: Date;
}

/** A job as the domain sees it; `db/` maps rows to this and nothing else leaves `db/`. */
export interface Job {
  id: JobId;
  tenantId: TenantId;
  principalId: PrincipalId;
  type: string;
  input: unknown;
  idempotencyKey: string | null;
  /** The BullMQ jobId this job is dispatched under. */
  dispatchId: string;
  status: JobStatus;
  version: number;
  plan: PlannedStep[];
  currentStep: string | null;
  stepsDone: number;
  progress: JobProgress | null;
  result: unknown;
  error: ErrorInfo | null;
  attempt: number;
  maxAttempts: number;
  attemptGroup: number;
  nextRunAt: Date | null;
  cancelRequestedAt: Date | null;
  cancelReason: string | null;
  waitingReason: string | null;
  waitingDetails: unknown;
  /** Set when a decision on a waiting job was recorded; a worker resumes it shortly. */
  resumeRequestedAt: Date | null;
  /** Past this the job is failed or cancelled (`deadlineAction`), whatever it is doing. */
  deadlineAt: Date | null;
  deadlineAction: 'fail' | 'cancel' | null;
  leaseOwner: WorkerId | null;
  leaseFence: number;
  leaseExpiresAt: Date | null;
  traceId: string | null;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** One checkpoint row (`job_steps`). */
export interface StepRecord {
  name: string;
  position: number;
  status: StepStatus;
  effect: StepEffect;
  attempt: number;
  attemptGroup: number;
  idempotencyKey: string;
  output: unknown;
  outputSha256: string | null;
  cursor: unknown;
  error: ErrorInfo | null;
  /** A person's decision on this step, when it needed one. */
  approval: StepApproval | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** A recorded decision on a step that needed approval. */
export interface StepApproval {
  decision: 'approved' | 'rejected';
  by: string;
  at: string;
  note: string | null;
}

/** What a step is about to do, shown to the person asked to approve it (DESIGN §7). */
export interface ApprovalRequest {
  /** The action in words: "POST https://api.example.com/orders". */
  action: string;
  /** The key parameters a person needs to judge it. Secrets must not be put here. */
  parameters: Record<string, unknown>;
  /** The impact in words: "creates an order; cannot be undone automatically". */
  impact: string;
}
