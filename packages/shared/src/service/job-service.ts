import type { Queue } from 'bullmq';
import type { Db } from '../db/client.js';
import type { Job, StepRecord } from '../job/job.js';
import type { JobRegistry } from '../job/job-registry.js';
import type { Principal, Scope } from '../auth/principal.js';
import { hasScope } from '../auth/principal.js';
import type { JobId } from '../ids.js';
import { newJobId } from '../ids.js';
import type { Logger } from '../log/logger.js';
import type { DispatchData } from '../queue/job-queue.js';
import { enqueueJob } from '../queue/job-queue.js';
import type { JobUpdateBus } from '../queue/job-update-bus.js';
import type { JobUpdate } from '../queue/job-update.js';
import { idempotencyHash, requestHash, sha256Hex } from '../hash/idempotency-hash.js';
import { canonicalJson } from '../hash/canonical-json.js';
import { createJob } from '../db/ops/create-job.js';
import { getJob, getJobSteps } from '../db/ops/get-job.js';
import { listJobs } from '../db/ops/list-jobs.js';
import { requestCancel } from '../db/ops/request-cancel.js';
import { appendAudit } from '../db/ops/append-audit.js';
import { respondToJob } from '../db/ops/respond-to-job.js';
import type { WaitDecision } from '../db/ops/respond-to-job.js';
import type { RespondDecision } from '../tools/schemas.js';
import { ConflictError } from '../errors/conflict-error.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';
import { isTerminal } from '../job/status.js';
import { DEFAULT_RETRY_POLICY, mergeRetryPolicy } from '../job/retry-policy.js';
import { JobNotFoundError } from '../errors/job-not-found-error.js';
import { ForbiddenError } from '../errors/access-errors.js';
import { CancelledError } from '../errors/cancelled-error.js';
import { ServiceUnavailableError } from '../errors/transient-error.js';
import { isTransientInfrastructureError } from '../errors/classify-error.js';
import { StepwiseError } from '../errors/stepwise-error.js';
import { checkJsonLimits } from './json-limits.js';
import type { CrashHook } from '../crash-hook.js';

export interface CallMeta {
  requestId: string;
  /** The caller's request lifetime (client cancel / disconnect). */
  signal?: AbortSignal | undefined;
  clientName?: string | undefined;
  clientVersion?: string | undefined;
  traceId?: string | undefined;
}

export interface JobServiceOptions {
  dedupWindowMs: number;
  maxInputBytes: number;
  maxInputDepth: number;
  /** Default 7 days. */
  jobTtlMs?: number | undefined;
  /** Test-only crash points (see crash-hook.ts); undefined in production. */
  crashHook?: CrashHook | undefined;
}

/** Called while waiting, for each live update (progress or status). */
export type OnUpdate = (job: JobUpdate) => void;

/**
 * What the MCP tools (and the CLI) do to jobs. Every method takes the calling principal and
 * scopes every read and write by its tenant; the transports only translate to and from MCP.
 */
export class JobService {
  constructor(
    private readonly db: Db,
    private readonly queue: Queue<DispatchData>,
    private readonly bus: JobUpdateBus,
    private readonly registry: JobRegistry,
    private readonly options: JobServiceOptions,
    private readonly log: Logger,
  ) {}

  /**
   * DESIGN §5: commits the job (and its event and audit row) before answering, then dispatches it.
   * @throws InvalidInputError, UnknownJobTypeError, IdempotencyConflictError, ForbiddenError, ServiceUnavailableError
   */
  async start(
    p: Principal,
    args: { type: string; input: unknown; idempotencyKey?: string | undefined },
    meta: CallMeta,
  ): Promise<{ job: Job; deduplicated: boolean }> {
    requireScope(p, 'jobs:write');
    checkJsonLimits(args.input, this.options.maxInputBytes, this.options.maxInputDepth, 'input');
    const prepared = this.registry.prepare(args.type, args.input);
    await prepared.type.validate?.(prepared.input, { tenantId: p.tenantId, signal: meta.signal ?? AbortSignal.timeout(20_000) });
    const hash = idempotencyHash(p.tenantId, args.type, prepared.input, args.idempotencyKey);
    const policy = mergeRetryPolicy(DEFAULT_RETRY_POLICY, prepared.type.retry);
    const { job, created } = await this.#store(() =>
      createJob(
        this.db,
        {
          id: newJobId(),
          tenantId: p.tenantId,
          principalId: p.principalId,
          type: args.type,
          input: prepared.input,
          idempotencyKey: args.idempotencyKey,
          idempotencyHash: hash,
          requestHash: requestHash(args.type, prepared.input),
          dedupWindowMs: this.options.dedupWindowMs,
          plan: prepared.plan,
          maxAttempts: policy.maxAttempts,
          traceId: meta.traceId,
          ttlMs: this.options.jobTtlMs,
        },
        this.#audit(p, meta, 'start_job', args),
      ),
    );
    this.options.crashHook?.('after-commit', 'start_job');
    if (job.status === 'pending') {
      // Also on a dedup hit: if an earlier server died between commit and enqueue, the retried
      // call heals it. BullMQ ignores the add when the entry exists.
      try {
        await enqueueJob(this.queue, job.dispatchId, { jobId: job.id, tenantId: job.tenantId });
      } catch (e: unknown) {
        // The job is committed; the sweeper re-enqueues pending jobs that lack a queue entry.
        this.log.warn({ err: e, jobId: job.id }, 'enqueue failed; job stays pending for the sweeper');
      }
    }
    return { job, deduplicated: !created };
  }

  /** @throws JobNotFoundError (also for another tenant's job), ForbiddenError */
  async get(p: Principal, jobId: JobId): Promise<Job> {
    requireScope(p, 'jobs:read');
    const job = await this.#store(() => getJob(this.db, p.tenantId, jobId));
    if (!job) throw new JobNotFoundError(jobId);
    return job;
  }

  async steps(p: Principal, jobId: JobId): Promise<StepRecord[]> {
    requireScope(p, 'jobs:read');
    return this.#store(() => getJobSteps(this.db, p.tenantId, jobId));
  }

  /**
   * Returns once the job is terminal or `waitMs` passed. Live updates come through Redis pub/sub
   * (no Postgres polling loop); Postgres is read at the start, at the end, and as a slow safety
   * net in case a notification was missed.
   */
  async wait(p: Principal, jobId: JobId, waitMs: number, onUpdate?: OnUpdate, signal?: AbortSignal): Promise<Job> {
    let job = await this.get(p, jobId);
    if (waitMs <= 0 || settled(job)) return job;
    let wake: () => void = () => {};
    const woken = new Promise<void>((resolve) => (wake = resolve));
    let unsubscribe: (() => Promise<void>) | undefined;
    try {
      unsubscribe = await this.bus.subscribe(p.tenantId, jobId, (u) => {
        onUpdate?.(u);
        if (isTerminal(u.status) || u.status === 'waiting') wake(); // re-read decides whether it settled
      });
    } catch (e: unknown) {
      this.log.warn({ err: e }, 'live updates unavailable; waiting on the safety re-read only');
    }
    const deadline = Date.now() + waitMs;
    const onAbort = () => wake();
    signal?.addEventListener('abort', onAbort);
    try {
      // Re-read after subscribing: an update published before the subscription is not lost.
      job = await this.get(p, jobId);
      while (!settled(job) && Date.now() < deadline && !signal?.aborted) {
        const slice = Math.min(5000, deadline - Date.now());
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([woken, new Promise<void>((r) => (timer = setTimeout(r, slice)))]);
        clearTimeout(timer);
        job = await this.get(p, jobId);
      }
      return job;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await unsubscribe?.();
    }
  }

  /**
   * DESIGN §7: idempotent. Ends a queued job at once; asks the worker holding a running job to
   * stop (pub/sub notice + the flag its next write reads).
   * @throws JobNotFoundError, ForbiddenError
   */
  async cancel(
    p: Principal,
    jobId: JobId,
    reason: string | undefined,
    meta: CallMeta,
  ): Promise<{ job: Job; outcome: 'cancelled' | 'cancel_requested' | 'already_finished' }> {
    requireScope(p, 'jobs:cancel');
    const message = reason ? `Cancelled: ${reason}` : 'The job was cancelled on request.';
    const result = await this.#store(() =>
      this.db.transaction(async (tx) => {
        const r = await requestCancel(tx, { tenantId: p.tenantId, jobId, reason: reason ?? null, error: new CancelledError(message).toInfo() });
        if (r) await appendAudit(tx, { ...this.#audit(p, meta, 'cancel_job', { jobId, reason }), targetJobId: jobId });
        return r;
      }),
    );
    if (!result) {
      const job = await this.get(p, jobId);
      return { job, outcome: isTerminal(job.status) ? 'already_finished' : 'cancel_requested' };
    }
    if (result.effect === 'cancelled') {
      // Best effort: a worker that still picks the entry up finds the job cancelled and skips it.
      await this.queue.remove(result.job.dispatchId).catch(() => 0);
      await this.bus
        .publishUpdate(p.tenantId, { jobId, status: 'cancelled', progress: null, at: Date.now() })
        .catch(() => undefined);
      return { job: result.job, outcome: 'cancelled' };
    }
    await this.bus.publishCancel(p.tenantId, { jobId, reason: reason ?? null }).catch((e: unknown) => {
      // The worker also sees cancel_requested_at on its next heartbeat or write.
      this.log.warn({ err: e, jobId }, 'cancel notice not published; worker will see the flag');
    });
    return { job: result.job, outcome: 'cancel_requested' };
  }

  /**
   * Resolves a `waiting` job with a person's decision (DESIGN §4, unsafe steps): persisted and
   * audited in one transaction, then the job is dispatched again when it resumes.
   * @throws JobNotFoundError, ForbiddenError, ConflictError (not waiting / decided meanwhile), InvalidInputError
   */
  async respond(
    p: Principal,
    args: { jobId: JobId; decision: RespondDecision; output?: unknown; note?: string | undefined },
    meta: CallMeta,
  ): Promise<Job> {
    requireScope(p, 'jobs:approve');
    const job = await this.get(p, args.jobId);
    if (job.status !== 'waiting' || !job.waitingReason) {
      throw new ConflictError('job_not_waiting', `Job ${job.id} is ${job.status}, not waiting for a decision; nothing to respond to.`);
    }
    const decision = this.#decision(job, args);
    const updated = await this.#store(() =>
      this.db.transaction(async (tx) => {
        const r = await respondToJob(tx, {
          tenantId: p.tenantId,
          jobId: job.id,
          by: p.principalId,
          expectedReason: job.waitingReason ?? '',
          decision,
          note: args.note ?? null,
          record: { decision: args.decision, step: job.currentStep },
        });
        if (r) await appendAudit(tx, { ...this.#audit(p, meta, 'respond_to_job', args), targetJobId: job.id });
        return r;
      }),
    );
    if (!updated) throw new ConflictError('job_not_waiting', `Job ${job.id} was decided or changed meanwhile; read it again.`);
    if (decision.kind === 'resume') {
      await enqueueJob(this.queue, updated.dispatchId, { jobId: updated.id, tenantId: updated.tenantId }).catch((e: unknown) =>
        this.log.warn({ err: e, jobId: updated.id }, 'enqueue failed; the sweeper will dispatch the resumed job'),
      );
    }
    await this.bus.publishUpdate(p.tenantId, { jobId: updated.id, status: updated.status, progress: null, at: Date.now() }).catch(() => undefined);
    return updated;
  }

  #decision(job: Job, args: { decision: RespondDecision; output?: unknown; note?: string | undefined }): WaitDecision {
    const reason = job.waitingReason;
    const step = job.currentStep;
    if (args.decision === 'cancel') {
      return { kind: 'cancel', error: new CancelledError(args.note ? `Cancelled: ${args.note}` : 'Cancelled while waiting for a decision.').toInfo() };
    }
    if (reason === 'needs_confirmation' && step) {
      if (args.decision === 'retry') return { kind: 'resume', stepReset: { step, to: 'pending' } };
      const type = this.registry.get(job.type);
      const def = type.plan(type.input.parse(job.input)).find((s) => s.name === step);
      let output: unknown = args.output ?? null;
      if (def?.output) {
        const parsed = def.output.safeParse(output);
        if (!parsed.success) throw InvalidInputError.fromZod(`output for step ${step}`, parsed.error.issues, ['output']);
        output = parsed.data;
      }
      return { kind: 'resume', stepDone: { step, output, outputSha256: sha256Hex(canonicalJson(output)) } };
    }
    if (reason === 'needs_reauthorization' && args.decision === 'retry') return { kind: 'resume' };
    throw new InvalidInputError(`Decision "${args.decision}" does not apply to a job waiting for ${reason ?? 'a decision'}.`, [
      { path: 'decision', message: `not valid for ${reason ?? 'this job'}` },
    ]);
  }

  async list(
    p: Principal,
    args: { status?: Job['status'] | undefined; type?: string | undefined; limit: number; before?: JobId | undefined },
  ): Promise<{ jobs: Job[]; hasMore: boolean }> {
    requireScope(p, 'jobs:read');
    return this.#store(() => listJobs(this.db, { tenantId: p.tenantId, ...args }));
  }

  #audit(p: Principal, meta: CallMeta, action: string, args: unknown) {
    return {
      tenantId: p.tenantId,
      principalId: p.principalId,
      clientName: meta.clientName,
      clientVersion: meta.clientVersion,
      action,
      argsDigest: sha256Hex(canonicalJson(args ?? null)),
      outcome: 'success' as const,
      requestId: meta.requestId,
      traceId: meta.traceId,
    };
  }

  /** Postgres failures that a retry can fix become one retryable error; nothing was half-written. */
  async #store<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e: unknown) {
      if (e instanceof StepwiseError) throw e;
      if (isTransientInfrastructureError(e)) throw new ServiceUnavailableError('postgres', e);
      throw e;
    }
  }
}

/** A waiter stops when the job ended, or when it needs a person (and no decision is pending). */
function settled(job: Job): boolean {
  return isTerminal(job.status) || (job.status === 'waiting' && job.resumeRequestedAt === null);
}

function requireScope(p: Principal, scope: Scope): void {
  if (!hasScope(p, scope)) throw new ForbiddenError(scope);
}
