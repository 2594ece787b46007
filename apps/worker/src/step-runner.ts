import type {
  PrincipalGrant,
  ApprovalRequest,
  BlobStore,
  ClaimedJob,
  Db,
  ErrorInfo,
  Job,
  JobType,
  JobUpdateBus,
  JobRegistry,
  Logger,
  StepContext,
  StepDefinition,
  StepIdentity,
  WorkerId,
} from '@stepwise/shared';
import {
  CancelledError,
  classifyError,
  decideRetry,
  InternalError,
  InvalidInputError,
  LeaseLostError,
  mergeRetryPolicy,
  ProgressThrottle,
  releaseLease,
  StepTimeoutError,
  StepwiseError,
  UnknownJobTypeError,
  WaitRequestedError,
} from '@stepwise/shared';
import { CheckpointWriter } from './checkpoint-writer.js';
import { LeaseKeeper } from './lease.js';
import { StepOutputStore } from './step-output-store.js';
import { WorkerShutdown } from './worker-shutdown.js';
import { ApprovalNeeded } from './approval-needed.js';

export interface StepRunnerDeps {
  db: Db;
  bus: JobUpdateBus;
  registry: JobRegistry;
  blobs: BlobStore;
  workerId: WorkerId;
  leaseMs: number;
  log: Logger;
  /** How long an approval request waits when the job type does not say (ms). */
  approvalTtlMs: number;
  /** True once the worker is shutting down: no new step starts; the job is handed back at the boundary. */
  isDraining?: () => boolean;
  /** Test-only crash points; inert unless STEPWISE_TEST_CRASH_AT is set (see crash-hook.ts). */
  crashHook?: (point: string, step: string) => void;
}

export type RunOutcome =
  | { kind: 'finished'; job: Job }
  | { kind: 'retry'; job: Job; delayMs: number }
  /** Another worker fenced us out; we wrote nothing after noticing. */
  | { kind: 'lease_lost' }
  /** Shutdown: lease released, the queue should deliver the job again. */
  | { kind: 'released' };

/**
 * Runs one claimed job through its plan, following the step protocol (DESIGN §3): intent before an
 * effectful step, the call, output validation, then checkpoint + advance in one write. Finished
 * steps are never run again; their checkpointed outputs feed later steps.
 */
export class StepRunner {
  readonly #outputs: StepOutputStore;

  constructor(private readonly deps: StepRunnerDeps) {
    this.#outputs = new StepOutputStore(deps.blobs);
  }

  async run(claimed: ClaimedJob, controller: AbortController): Promise<RunOutcome> {
    const { job } = claimed;
    const fence = { jobId: job.id, fence: job.leaseFence };
    const log = this.deps.log.child({ jobId: job.id, type: job.type, fence: job.leaseFence, workerId: this.deps.workerId });
    const writer = new CheckpointWriter(this.deps.db, this.deps.bus, fence, job.tenantId, this.deps.workerId, log);
    const lease = new LeaseKeeper(
      writer,
      this.deps.leaseMs,
      (e) => controller.abort(e),
      () => controller.abort(new CancelledError(job.cancelReason ?? 'The job was cancelled.')),
      log,
    );
    lease.start();
    // The job's deadline bounds everything, the running step included.
    const deadline = job.deadlineAt
      ? setTimeout(() => controller.abort(deadlineError(job.deadlineAction ?? 'fail')), Math.max(0, job.deadlineAt.getTime() - Date.now()))
      : undefined;
    try {
      return await this.#run(claimed, controller, writer, log);
    } catch (e: unknown) {
      if (e instanceof LeaseLostError) {
        log.warn({ err: e }, 'lease lost; stopped without further writes');
        return { kind: 'lease_lost' };
      }
      throw e;
    } finally {
      lease.stop();
      clearTimeout(deadline);
    }
  }

  async #run(claimed: ClaimedJob, controller: AbortController, writer: CheckpointWriter, log: Logger): Promise<RunOutcome> {
    const { job } = claimed;
    if (job.cancelRequestedAt) writer.cancelRequested = true;

    // Recovery re-validation (DESIGN §4): the type must exist, the input must still parse, and the
    // plan must be the one the job started with. None of these can fix itself, so the job fails.
    const prepared = this.#prepare(job, claimed.principalGrant);
    if (prepared instanceof StepwiseError) {
      return { kind: 'finished', job: await writer.finish({ to: 'failed', error: prepared.toInfo(), reason: prepared.code }) };
    }
    const { type, input, steps } = prepared;

    // One throttle for the whole run: progress writes are rate-limited per job, not per step.
    const throttle = new ProgressThrottle(Date.now());
    const records = new Map(claimed.steps.map((s) => [s.name, s]));
    const outputs: Record<string, unknown> = {};
    for (const s of claimed.steps) if (s.status === 'succeeded') outputs[s.name] = await this.#outputs.load(s.output);

    for (let i = 0; i < steps.length; i++) {
      const def = steps[i] as StepDefinition<unknown>;
      const record = records.get(def.name);
      if (record?.status === 'succeeded') continue;

      if (controller.signal.aborted || writer.cancelRequested) {
        return this.#stopped(controller.signal.reason, job, type, input, outputs, writer, log);
      }
      if (this.deps.isDraining?.()) return this.#stopped(new WorkerShutdown(), job, type, input, outputs, writer, log);

      const attempt = job.currentStep === def.name ? job.attempt : 1;
      const identity: StepIdentity = {
        name: def.name,
        position: i,
        effect: def.effect,
        attempt,
        attemptGroup: job.attemptGroup,
        idempotencyKey: `${job.id}:${def.name}:${job.attemptGroup}`,
      };
      const stepLog = log.child({ step: def.name, attempt });
      const stepController = new AbortController();
      const signal = AbortSignal.any([controller.signal, stepController.signal]);
      let intentWritten = false;
      const writeIntent = async () => {
        if (intentWritten) return;
        await writer.intent(identity);
        intentWritten = true;
      };
      const ctx: StepContext<unknown> = {
        jobId: job.id,
        tenantId: job.tenantId,
        step: def.name,
        attempt,
        attemptGroup: job.attemptGroup,
        input,
        outputs,
        signal,
        idempotencyKey: identity.idempotencyKey,
        cursor: record?.cursor ?? undefined,
        log: stepLog,
        blobs: this.deps.blobs,
        progress: (done, total, message) => {
          if (!throttle.shouldFlush(Date.now(), done, total)) return;
          const share = total && total > 0 ? Math.min(1, done / total) : 0;
          void writer.progress({ done, total, message: message ?? null }, (i + share) / steps.length);
        },
        requestApproval: async (request) => {
          if (record?.approval?.decision === 'approved') return;
          throw new ApprovalNeeded(request);
        },
        saveCursor: async (state) => {
          await writeIntent();
          await writer.cursor(def.name, state);
          if (writer.cancelRequested) controller.abort(new CancelledError(job.cancelReason ?? 'The job was cancelled.'));
        },
      };

      // An unsafe step that was started but never checkpointed may or may not have taken effect.
      // Never replay it blindly: ask reconcile(), or stop and ask a person.
      if (record?.status === 'started' && def.effect === 'unsafe') {
        if (!def.reconcile) {
          stepLog.warn('unsafe step was interrupted; waiting for confirmation');
          return {
            kind: 'finished',
            job: await writer.finish({
              to: 'waiting',
              reason: 'needs_confirmation',
              waitingReason: 'needs_confirmation',
              waitingDetails: { step: def.name, idempotencyKey: identity.idempotencyKey, startedAt: record.startedAt },
            }),
          };
        }
        let r;
        try {
          r = await def.reconcile(ctx);
        } catch (e: unknown) {
          // Could not find out: treat like a failed attempt (a retry asks again; never a blind replay).
          if (controller.signal.aborted) return this.#stopped(controller.signal.reason, job, type, input, outputs, writer, log);
          return this.#failed(classifyError(e), identity, new Date(), def, writer, stepLog, job, type, input, outputs, log);
        }
        if (r.done) {
          const outcome = await this.#checkpoint(def, identity, r.output, new Date(), i, steps, job, type, input, outputs, writer);
          if (outcome) return outcome;
          continue;
        }
      }

      // A step that needs a person's approval waits for it before anything runs; a recorded
      // approval (persisted on the step) is never asked for again, across restarts.
      if (def.approval === 'required' && record?.approval?.decision !== 'approved') {
        const request = def.describeApproval ? def.describeApproval(ctx) : { action: `run step "${def.name}" of ${job.type}`, parameters: {}, impact: 'not described by the job type' };
        return this.#awaitApproval(request, identity, type, writer, stepLog);
      }

      const startedAt = new Date();
      this.deps.crashHook?.('before-intent', def.name);
      if (def.effect !== 'none') await writeIntent();
      this.deps.crashHook?.('after-intent', def.name);

      let timer: NodeJS.Timeout | undefined;
      if (def.timeoutMs !== undefined) {
        timer = setTimeout(() => stepController.abort(new StepTimeoutError(def.name, def.timeoutMs ?? 0)), def.timeoutMs);
      }
      let output: unknown;
      try {
        output = await def.run(ctx);
        if (def.output) output = def.output.parse(output);
        this.deps.crashHook?.('after-call', def.name);
      } catch (e: unknown) {
        if (controller.signal.aborted) return this.#stopped(controller.signal.reason, job, type, input, outputs, writer, log);
        if (e instanceof ApprovalNeeded) return this.#awaitApproval(e.request, identity, type, writer, stepLog);
        const error = stepController.signal.aborted ? classifyError(stepController.signal.reason) : classifyError(e);
        return this.#failed(error, identity, startedAt, def, writer, stepLog, job, type, input, outputs, log);
      } finally {
        if (timer) clearTimeout(timer);
      }

      const outcome = await this.#checkpoint(def, identity, output, startedAt, i, steps, job, type, input, outputs, writer);
      if (outcome) return outcome;
      this.deps.crashHook?.('after-checkpoint', def.name);
    }
    // Every step was already checkpointed (e.g. crash right after the last checkpoint).
    throw new InternalError(`job ${job.id}: plan exhausted without completing`);
  }

  #prepare(job: Job, grant: PrincipalGrant | null): { type: JobType; input: unknown; steps: readonly StepDefinition<unknown>[] } | StepwiseError {
    if (!this.deps.registry.has(job.type)) return new UnknownJobTypeError(job.type, this.deps.registry.names());
    // The principal must still be allowed to run this type (a stored principal can be disabled or
    // lose scopes while its job waits). Principals without a row (local, JWT) have nothing stored.
    if (grant?.disabled) {
      return new StepwiseError('principal_disabled', 'forbidden', `The principal that started this job (${job.principalId}) has been disabled.`);
    }
    if (grant && !['jobs:write', 'admin', `jobtype:${job.type}`].some((s) => grant.scopes.includes(s))) {
      return new StepwiseError('principal_not_authorized', 'forbidden', `The principal that started this job may no longer start ${job.type} jobs.`);
    }
    const type = this.deps.registry.get(job.type);
    const parsed = type.input.safeParse(job.input);
    if (!parsed.success) return InvalidInputError.fromZod(`stored input for ${job.type}`, parsed.error.issues, ['input']);
    const steps = type.plan(parsed.data);
    const names = steps.map((s) => s.name).join(',');
    if (names !== job.plan.map((s) => s.name).join(',')) {
      return new StepwiseError('plan_changed', 'internal', `The plan of ${job.type} changed since this job started; it cannot resume safely.`, {
        details: { started: job.plan.map((s) => s.name), now: steps.map((s) => s.name) },
      });
    }
    return { type, input: parsed.data, steps };
  }

  /** Checkpoints a step; on the last step also completes the job. Returns an outcome when the run ends. */
  async #checkpoint(
    def: StepDefinition<unknown>,
    identity: StepIdentity,
    output: unknown,
    startedAt: Date,
    i: number,
    steps: readonly StepDefinition<unknown>[],
    job: Job,
    type: JobType,
    input: unknown,
    outputs: Record<string, unknown>,
    writer: CheckpointWriter,
  ): Promise<RunOutcome | undefined> {
    const { stored, sha256 } = await this.#outputs.save(job.id, def.name, output);
    outputs[def.name] = output;
    const total = steps.length;
    const progress = { done: i + 1, total, message: `completed ${def.name} (${i + 1}/${total})` };
    const checkpoint = { step: identity, output: stored, outputSha256: sha256, startedAt };
    if (i === total - 1) {
      const result = type.result(outputs, input);
      const finished = await writer.finish({
        to: 'succeeded',
        reason: null,
        result: (await this.#outputs.save(job.id, '_result', result)).stored,
        error: null,
        stepsDone: total,
        progress,
        step: { kind: 'succeeded', checkpoint },
      });
      return { kind: 'finished', job: finished };
    }
    const next = steps[i + 1];
    await writer.checkpoint({ ...checkpoint, stepsDone: i + 1, nextStep: next ? next.name : null, progress });
    return undefined;
  }

  async #failed(
    error: StepwiseError,
    identity: StepIdentity,
    startedAt: Date,
    def: StepDefinition<unknown>,
    writer: CheckpointWriter,
    stepLog: Logger,
    job: Job,
    type: JobType,
    input: unknown,
    outputs: Record<string, unknown>,
    log: Logger,
  ): Promise<RunOutcome> {
    const info: ErrorInfo = error.toInfo();
    const step = { kind: 'failed' as const, step: identity, error: info, startedAt };
    // The step asked for a person (e.g. a downstream tool changed): wait with its reason, never retry.
    if (error instanceof WaitRequestedError) {
      stepLog.warn({ err: error, code: info.code, waitingReason: error.reason }, 'step asked to wait');
      return {
        kind: 'finished',
        job: await writer.finish({
          to: 'waiting',
          reason: error.reason,
          waitingReason: error.reason,
          waitingDetails: { step: def.name, message: error.message, ...error.details },
          error: info,
          step,
        }),
      };
    }
    const policy = mergeRetryPolicy(type.retry, def.retry);
    const decision = decideRetry(info, identity.attempt, policy);
    stepLog.warn({ err: error, code: info.code, category: info.category, decision: decision.kind }, 'step failed');
    switch (decision.kind) {
      case 'retry': {
        const nextRunAt = new Date(Date.now() + decision.delayMs);
        const updated = await writer.finish({
          to: 'retrying',
          reason: info.code,
          error: info,
          nextRunAt,
          nextAttempt: identity.attempt + 1,
          step,
        });
        return { kind: 'retry', job: updated, delayMs: decision.delayMs };
      }
      case 'wait':
        return {
          kind: 'finished',
          job: await writer.finish({
            to: 'waiting',
            reason: decision.reason,
            waitingReason: decision.reason,
            error: info,
            step,
            // When someone resumes it, the step's next run is its next attempt.
            nextAttempt: identity.attempt + 1,
          }),
        };
      case 'fail':
        return { kind: 'finished', job: await writer.finish({ to: 'failed', reason: info.code, error: info, step }) };
      case 'cancel':
        return this.#stopped(new CancelledError(info.message), job, type, input, outputs, writer, log);
    }
  }

  async #awaitApproval(request: ApprovalRequest, identity: StepIdentity, type: JobType, writer: CheckpointWriter, log: Logger): Promise<RunOutcome> {
    const ttl = type.approvalTtlMs ?? this.deps.approvalTtlMs;
    log.info({ action: request.action }, 'step waits for approval');
    return {
      kind: 'finished',
      job: await writer.finish({
        to: 'waiting',
        reason: 'needs_approval',
        waitingReason: 'needs_approval',
        waitingDetails: { step: identity.name, ...request },
        waitingExpiresAt: new Date(Date.now() + ttl),
        step: { kind: 'awaiting', step: identity },
      }),
    };
  }

  /** The run was interrupted by its signal or a cancel request: decide why and end accordingly. */
  async #stopped(
    reason: unknown,
    job: Job,
    type: JobType,
    input: unknown,
    outputs: Record<string, unknown>,
    writer: CheckpointWriter,
    log: Logger,
  ): Promise<RunOutcome> {
    if (reason instanceof LeaseLostError) {
      log.warn({ err: reason }, 'lease lost; stopped without further writes');
      return { kind: 'lease_lost' };
    }
    if (reason instanceof StepwiseError && reason.code === 'deadline_exceeded') {
      const to = reason.details?.action === 'cancel' ? 'cancelled' : 'failed';
      log.warn({ to }, 'job deadline passed');
      return { kind: 'finished', job: await writer.finish({ to, reason: 'deadline_exceeded', error: reason.toInfo() }) };
    }
    if (reason instanceof WorkerShutdown) {
      await releaseLease(this.deps.db, { jobId: job.id, fence: job.leaseFence });
      log.info('released job for shutdown');
      return { kind: 'released' };
    }
    // Cancellation: run the type's cleanup, then end as cancelled.
    if (type.onCancel) {
      try {
        await type.onCancel({ jobId: job.id, input, outputs, log });
      } catch (e: unknown) {
        log.error({ err: e }, 'cancel cleanup failed');
      }
    }
    const message = reason instanceof CancelledError ? reason.message : (job.cancelReason ?? 'The job was cancelled.');
    const finished = await writer.finish({
      to: 'cancelled',
      reason: 'cancel_requested',
      error: new CancelledError(message).toInfo(),
    });
    log.info('job cancelled');
    return { kind: 'finished', job: finished };
  }
}

/** The error a job's deadline ends it with; `details.action` says whether it fails or is cancelled. */
export function deadlineError(action: 'fail' | 'cancel'): StepwiseError {
  return new StepwiseError('deadline_exceeded', 'timeout', 'The job ran past its deadline and was stopped.', {
    retryable: false,
    details: { action },
  });
}
