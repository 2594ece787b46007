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
import { reopenFailedJob } from '../db/ops/reopen-failed-job.js';
import type { WaitDecision } from '../db/ops/respond-to-job.js';
import type { JobHistoryEntry, RespondDecision } from '../tools/schemas.js';
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
import { enrichInput } from '../job/enrich-input.js';
import { auditArgs } from '../audit/redact.js';
import { decodeHistoryCursor, getJobHistory } from '../db/ops/get-job-history.js';
import { checkStartQuota } from '../db/ops/check-start-quota.js';
import { RateLimitedError } from '../errors/rate-limited-error.js';
import type { CrashHook } from '../crash-hook.js';

export interface CallMeta {
  requestId: string;
  /** The caller's request lifetime (client cancel / disconnect). */
  signal?: AbortSignal | undefined;
  clientName?: string | undefined;
  clientVersion?: string | undefined;
  traceId?: string | undefined;
  /**
   * Set by the service once this call's audit row committed in the same transaction as its
   * change; the transport then records no second row for the call.
   */
  audited?: boolean | undefined;
}

export interface JobServiceOptions {
  dedupWindowMs: number;
  maxInputBytes: number;
  maxInputDepth: number;
  /** Default 7 days. */
  jobTtlMs?: number | undefined;
  /** Refuse approvals by the principal who started the job (four-eyes rule). */
  requireDistinctApprover?: boolean | undefined;
  /** Test-only crash points (see crash-hook.ts); undefined in production. */
  crashHook?: CrashHook | undefined;
  /** Per-principal limits on start_job; none when undefined. */
  quota?: StartQuota | undefined;
}

export interface StartQuota {
  /** Jobs a principal may have pending, running, waiting or retrying at once. */
  maxActiveJobs: number;
  /** Jobs a principal may create per sliding 60 s window. */
  startsPerMinute: number;
}

/** What a caller over its active-jobs quota is told to wait: no event says when a job will end. */
const ACTIVE_QUOTA_RETRY_MS = 5000;

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
   * @throws InvalidInputError, UnknownJobTypeError, IdempotencyConflictError, ForbiddenError, ServiceUnavailableError, RateLimitedError (quota)
   */
  async start(
    p: Principal,
    args: {
      type: string;
      input: unknown;
      idempotencyKey?: string | undefined;
      deadlineSeconds?: number | undefined;
      onDeadline?: 'fail' | 'cancel' | undefined;
    },
    meta: CallMeta,
  ): Promise<{ job: Job; deduplicated: boolean }> {
    requireScope(p, 'jobs:write');
    checkJsonLimits(args.input, this.options.maxInputBytes, this.options.maxInputDepth, 'input');
    const prepared = this.registry.prepare(args.type, args.input);
    const planning = { tenantId: p.tenantId, signal: meta.signal ?? AbortSignal.timeout(20_000) };
    await prepared.type.validate?.(prepared.input, planning);
    // Hashes cover the caller's input; the stored input and plan are the enriched ones.
    const hash = idempotencyHash(p.tenantId, args.type, prepared.input, args.idempotencyKey);
    await this.#checkQuota(p, hash);
    const stored = await enrichInput(prepared, planning);
    const policy = mergeRetryPolicy(DEFAULT_RETRY_POLICY, prepared.type.retry);
    const { job, created } = await this.#store(() =>
      createJob(
        this.db,
        {
          id: newJobId(),
          tenantId: p.tenantId,
          principalId: p.principalId,
          type: args.type,
          input: stored.input,
          idempotencyKey: args.idempotencyKey,
          idempotencyHash: hash,
          requestHash: requestHash(args.type, prepared.input),
          dedupWindowMs: this.options.dedupWindowMs,
          plan: stored.plan,
          maxAttempts: policy.maxAttempts,
          traceId: meta.traceId,
          ttlMs: this.options.jobTtlMs,
          deadlineMs: args.deadlineSeconds !== undefined ? args.deadlineSeconds * 1000 : prepared.type.deadlineMs,
          deadlineAction: args.onDeadline ?? prepared.type.onDeadline,
        },
        this.#audit(p, meta, 'start_job', args, prepared.type.redact.map((path) => `input.${path}`)),
      ),
    );
    meta.audited = true;
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
    if (result) meta.audited = true;
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
   * retry_job: re-runs a `failed` job from the step that failed, keeping the checkpoints of the
   * steps that succeeded; re-run steps get fresh idempotency keys (new attempt group).
   * @throws JobNotFoundError, ForbiddenError, ConflictError (not failed)
   */
  async retry(p: Principal, jobId: JobId, note: string | undefined, meta: CallMeta): Promise<Job> {
    requireScope(p, 'jobs:write');
    const reopened = await this.#store(() =>
      this.db.transaction(async (tx) => {
        const r = await reopenFailedJob(tx, { tenantId: p.tenantId, jobId, by: p.principalId, note: note ?? null });
        if (r) await appendAudit(tx, { ...this.#audit(p, meta, 'retry_job', { jobId, note }), targetJobId: jobId });
        return r;
      }),
    );
    if (reopened) meta.audited = true;
    if (!reopened) {
      const job = await this.get(p, jobId);
      throw new ConflictError('job_not_failed', `Job ${job.id} is ${job.status}; only a failed job can be retried.`);
    }
    await enqueueJob(this.queue, reopened.dispatchId, { jobId: reopened.id, tenantId: reopened.tenantId }).catch((e: unknown) =>
      this.log.warn({ err: e, jobId }, 'enqueue failed; the sweeper will dispatch the retried job'),
    );
    return reopened;
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
    if (args.output !== undefined) checkJsonLimits(args.output, this.options.maxInputBytes, this.options.maxInputDepth, 'output');
    const job = await this.get(p, args.jobId);
    if (job.status !== 'waiting' || !job.waitingReason) {
      throw new ConflictError('job_not_waiting', `Job ${job.id} is ${job.status}, not waiting for a decision; nothing to respond to.`);
    }
    const decision = this.#decision(p, job, args);
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
    if (updated) meta.audited = true;
    if (!updated) throw new ConflictError('job_not_waiting', `Job ${job.id} was decided or changed meanwhile; read it again.`);
    if (decision.kind === 'resume') {
      await enqueueJob(this.queue, updated.dispatchId, { jobId: updated.id, tenantId: updated.tenantId }).catch((e: unknown) =>
        this.log.warn({ err: e, jobId: updated.id }, 'enqueue failed; the sweeper will dispatch the resumed job'),
      );
    }
    await this.bus.publishUpdate(p.tenantId, { jobId: updated.id, status: updated.status, progress: null, at: Date.now() }).catch(() => undefined);
    return updated;
  }

  #decision(p: Principal, job: Job, args: { decision: RespondDecision; output?: unknown; note?: string | undefined }): WaitDecision {
    const reason = job.waitingReason;
    const step = job.currentStep;
    if (reason === 'needs_approval' && step && (args.decision === 'approve' || args.decision === 'reject')) {
      if (this.options.requireDistinctApprover && p.principalId === job.principalId) {
        throw new StepwiseError('approver_is_requester', 'forbidden', 'Policy requires someone other than the requester to approve this job.');
      }
      const approval = { decision: args.decision === 'approve' ? ('approved' as const) : ('rejected' as const), by: p.principalId, at: new Date().toISOString(), note: args.note ?? null };
      if (args.decision === 'approve') return { kind: 'resume', stepApproval: { step, approval } };
      return {
        kind: 'cancel',
        error: new StepwiseError('approval_rejected', 'cancelled', `Approval of step "${step}" was rejected${args.note ? `: ${args.note}` : '.'}`, { retryable: false }).toInfo(),
        stepApproval: { step, approval },
      };
    }
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
    if (reason !== null && FIX_THEN_RETRY_REASONS.has(reason) && args.decision === 'retry') return { kind: 'resume' };
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

  /**
   * get_job_history: the job's events and the audit rows targeting it, oldest first, one page.
   * @throws JobNotFoundError (also for another tenant's job), ForbiddenError, InvalidInputError (bad cursor)
   */
  async history(
    p: Principal,
    args: { jobId: JobId; limit: number; cursor?: string | undefined },
  ): Promise<{ entries: JobHistoryEntry[]; nextCursor: string | null }> {
    const after = args.cursor === undefined ? undefined : decodeHistoryCursor(args.cursor);
    if (args.cursor !== undefined && !after) {
      throw new InvalidInputError('cursor is not a nextCursor returned by get_job_history.', [{ path: 'cursor', message: 'unknown cursor' }]);
    }
    const job = await this.get(p, args.jobId);
    const { entries, next } = await this.#store(() => getJobHistory(this.db, { tenantId: p.tenantId, jobId: job.id, limit: args.limit, after }));
    return { entries, nextCursor: next };
  }

  /**
   * Refuses a start over the principal's quotas, unless it is a dedup hit: a retried call must
   * get its job back even when the caller is at its limit. One read, before enrichment and the
   * insert (see check-start-quota.ts for why a small overshoot under concurrency is accepted).
   * @throws RateLimitedError
   */
  async #checkQuota(p: Principal, hash: string): Promise<void> {
    const q = this.options.quota;
    if (!q) return;
    const usage = await this.#store(() => checkStartQuota(this.db, { tenantId: p.tenantId, principalId: p.principalId, idempotencyHash: hash }));
    if (usage.duplicate) return;
    if (usage.active >= q.maxActiveJobs) {
      throw new RateLimitedError(`You have ${usage.active} active jobs; the limit is ${q.maxActiveJobs}. Wait for some to finish (or cancel some).`, ACTIVE_QUOTA_RETRY_MS);
    }
    if (usage.startedLastMinute >= q.startsPerMinute) {
      throw new RateLimitedError(`You started ${usage.startedLastMinute} jobs in the last minute; the limit is ${q.startsPerMinute}.`, Math.max(1000, usage.windowFreesInMs));
    }
  }

  #audit(p: Principal, meta: CallMeta, action: string, args: unknown, redactPaths: readonly string[] = []) {
    return {
      tenantId: p.tenantId,
      principalId: p.principalId,
      clientName: meta.clientName,
      clientVersion: meta.clientVersion,
      action,
      argsDigest: sha256Hex(canonicalJson(args ?? null)),
      argsRedacted: auditArgs(args ?? null, redactPaths),
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

/**
 * Waits a person ends by fixing something outside Stepwise (a credential, a downstream tool's
 * schema or presence) and answering `retry`: the step then runs again and re-checks.
 */
const FIX_THEN_RETRY_REASONS: ReadonlySet<string> = new Set(['needs_reauthorization', 'schema_changed', 'tool_unavailable']);

/** A waiter stops when the job ended, or when it needs a person (and no decision is pending). */
function settled(job: Job): boolean {
  return isTerminal(job.status) || (job.status === 'waiting' && job.resumeRequestedAt === null);
}

function requireScope(p: Principal, scope: Scope): void {
  if (!hasScope(p, scope)) throw new ForbiddenError(scope);
}
