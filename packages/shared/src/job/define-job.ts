import type { z } from 'zod';
import type { Logger } from 'pino';
import type { JobId, TenantId } from '../ids.js';
import type { StepEffect } from './status.js';
import type { RetryPolicyInput } from './retry-policy.js';
import type { BlobStore } from '../blob/blob-store.js';
import type { ApprovalRequest } from './job.js';

/** What a step receives (DESIGN §2). */
export interface StepContext<I> {
  jobId: JobId;
  tenantId: TenantId;
  /** This step's name. */
  step: string;
  /** 1-based attempt number of this step within its attempt group. */
  attempt: number;
  /** Starts at 1; retry_job starts a new group (and so new idempotency keys) for re-run steps. */
  attemptGroup: number;
  input: I;
  /** Checkpointed outputs of the steps that already succeeded, by step name. */
  outputs: Readonly<Record<string, unknown>>;
  /** Fires on cancellation, step timeout, lease loss or worker shutdown. Check it in loops. */
  signal: AbortSignal;
  /**
   * Report progress in words a person understands ("indexed 4,392/10,000: report.pdf").
   * Throttled by the runner (DESIGN §7), so call it as often as you like.
   */
  progress(done: number, total: number | null, message?: string): void;
  /** `jobId:step:attemptGroup`: stable across retries and crashes; pass it to external systems. */
  idempotencyKey: string;
  /** The last value given to `saveCursor` for this step, or undefined on a fresh start. */
  cursor: unknown;
  /** Persist a resume point (fenced). A resumed step sees it as `cursor`. */
  saveCursor(state: unknown): Promise<void>;
  /**
   * Ask a person before going further. Returns at once when this step was already approved;
   * otherwise the job moves to `waiting` (needs_approval) and this step runs again, from the
   * start, once someone approves. Put no secrets in the request.
   */
  requestApproval(request: ApprovalRequest): Promise<void>;
  log: Logger;
  blobs: BlobStore;
}

export type ReconcileResult<O> = { done: true; output: O } | { done: false };

export interface StepDefinition<I, O = unknown> {
  /** Unique within the plan; lower-case letters, digits, `.`, `_`, `-`. */
  name: string;
  effect: StepEffect;
  run(ctx: StepContext<I>): Promise<O>;
  /** Validates the output before it is checkpointed. */
  output?: z.ZodType<O>;
  /** Fires the step's signal and fails the attempt with category `timeout`. */
  timeoutMs?: number;
  retry?: RetryPolicyInput;
  /** `required`: a person approves before the step runs (the job waits with `needs_approval`). */
  approval?: 'required' | 'none';
  /** What to show the approver; defaults to the step name. */
  describeApproval?(ctx: StepContext<I>): ApprovalRequest;
  /** For `unsafe` steps: ask the external system whether an interrupted call took effect. */
  reconcile?(ctx: StepContext<I>): Promise<ReconcileResult<O>>;
}

export interface JobTypeDefinition<S extends z.ZodType> {
  /** `namespace.verb`, e.g. `files.index`. */
  name: string;
  title?: string;
  /** Written for an LLM: what it does, when to use it, what the result holds. */
  description: string;
  input: S;
  output?: z.ZodType;
  /** The ordered plan. A function when the steps depend on the input. */
  steps: readonly StepDefinition<z.output<S>>[] | ((input: z.output<S>) => readonly StepDefinition<z.output<S>>[]);
  retry?: RetryPolicyInput;
  /** The whole job must end within this many ms of its start_job; then `onDeadline` applies. */
  deadlineMs?: number;
  onDeadline?: 'fail' | 'cancel';
  /** How long an approval request waits for an answer before the job is cancelled. */
  approvalTtlMs?: number;
  /** Dotted paths inside `input` (`auth.pin`, `rows.*.ssn`) redacted from audit records, beyond the secret-looking keys redacted by default. */
  redact?: readonly string[];
  /**
   * Extra checks at start_job, after the schema parsed: things a schema cannot know (a downstream
   * server exists, a tool is there). Throw InvalidInputError; nothing is written when it throws.
   */
  validate?(input: z.output<S>, ctx: ValidateContext): Promise<void>;
  /**
   * Completes the input at start_job, after `validate`, with facts known only at planning time
   * (e.g. the annotations of downstream tools), so `steps(input)` stays pure and deterministic.
   * What it returns is re-parsed by `input` and stored; the idempotency hash still covers the
   * caller's input. Called once per start_job, never on resume.
   */
  enrich?(input: z.output<S>, ctx: ValidateContext): Promise<z.output<S>>;
  /** The job's result from its step outputs; defaults to the last step's output. */
  result?(outputs: Readonly<Record<string, unknown>>, input: z.output<S>): unknown;
  /** Cleanup after cancellation, run by the worker that held the job. */
  onCancel?(ctx: { jobId: JobId; input: z.output<S>; outputs: Readonly<Record<string, unknown>>; log: Logger }): Promise<void>;
}

export interface ValidateContext {
  tenantId: TenantId;
  signal: AbortSignal;
}

/** A registered job type with its input type erased; its own schema re-parses input before use. */
export interface JobType {
  name: string;
  title: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType | undefined;
  retry: RetryPolicyInput | undefined;
  deadlineMs: number | undefined;
  onDeadline: 'fail' | 'cancel';
  approvalTtlMs: number | undefined;
  /** Paths inside `input` redacted from audit records (see JobTypeDefinition.redact). */
  redact: readonly string[];
  validate: ((input: unknown, ctx: ValidateContext) => Promise<void>) | undefined;
  enrich: ((input: unknown, ctx: ValidateContext) => Promise<unknown>) | undefined;
  plan(input: unknown): readonly StepDefinition<unknown>[];
  result(outputs: Readonly<Record<string, unknown>>, input: unknown): unknown;
  onCancel: ((ctx: { jobId: JobId; input: unknown; outputs: Readonly<Record<string, unknown>>; log: Logger }) => Promise<void>) | undefined;
}

const NAME = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/;
const STEP = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * Declares a job type. The plan is validated when it is built (unique, well-formed step names),
 * so a broken type fails at start_job, not halfway through a run.
 * @throws Error for a malformed type or step name.
 */
export function defineJob<S extends z.ZodType>(def: JobTypeDefinition<S>): JobType {
  if (!NAME.test(def.name)) throw new Error(`job type name "${def.name}" must look like namespace.verb`);
  const plan = (input: unknown): readonly StepDefinition<unknown>[] => {
    const steps = (typeof def.steps === 'function' ? def.steps(input as z.output<S>) : def.steps) as readonly StepDefinition<unknown>[];
    if (steps.length === 0) throw new Error(`job type ${def.name}: the plan has no steps`);
    const seen = new Set<string>();
    for (const s of steps) {
      if (!STEP.test(s.name)) throw new Error(`job type ${def.name}: bad step name "${s.name}"`);
      if (seen.has(s.name)) throw new Error(`job type ${def.name}: duplicate step "${s.name}"`);
      seen.add(s.name);
    }
    return steps;
  };
  return {
    name: def.name,
    title: def.title ?? def.name,
    description: def.description,
    input: def.input,
    output: def.output,
    retry: def.retry,
    deadlineMs: def.deadlineMs,
    onDeadline: def.onDeadline ?? 'fail',
    approvalTtlMs: def.approvalTtlMs,
    redact: def.redact ?? [],
    validate: def.validate as JobType['validate'],
    enrich: def.enrich as JobType['enrich'],
    plan,
    result: (outputs, input) => {
      if (def.result) return def.result(outputs, input as z.output<S>);
      const steps = plan(input);
      const last = steps[steps.length - 1];
      return last ? outputs[last.name] : null;
    },
    onCancel: def.onCancel as JobType['onCancel'],
  };
}
