export type { Brand, JobId, TenantId, PrincipalId, RequestId, WorkerId } from './ids.js';
export { JobIdSchema, TenantIdSchema, PrincipalIdSchema, newJobId, newRequestId, newWorkerId, unsafeCast } from './ids.js';

export type { JobStatus, TerminalStatus, StepStatus, StepEffect } from './job/status.js';
export {
  JOB_STATUSES,
  JobStatusSchema,
  TERMINAL_STATUSES,
  isTerminal,
  STEP_STATUSES,
  StepStatusSchema,
  STEP_EFFECTS,
  StepEffectSchema,
} from './job/status.js';
export { TRANSITIONS, canTransition, assertTransition, sourcesOf, REOPENABLE, canReopen } from './job/transitions.js';
export type { Job, JobProgress, PlannedStep, StepRecord, StepApproval, ApprovalRequest } from './job/job.js';
export type { RetryPolicy, RetryPolicyInput, RetryDecision } from './job/retry-policy.js';
export { RetryPolicySchema, DEFAULT_RETRY_POLICY, mergeRetryPolicy, backoffDelayMs, decideRetry } from './job/retry-policy.js';
export type { StepContext, StepDefinition, JobTypeDefinition, JobType, ReconcileResult, ValidateContext } from './job/define-job.js';
export { defineJob } from './job/define-job.js';
export { enrichInput } from './job/enrich-input.js';
export { JobRegistry } from './job/job-registry.js';

export type { ErrorCategory } from './errors/error-category.js';
export { ERROR_CATEGORIES, ErrorCategorySchema, isRetryableCategory } from './errors/error-category.js';
export type { ErrorInfo, StepwiseErrorOptions } from './errors/stepwise-error.js';
export { StepwiseError, ErrorInfoSchema, isStepwiseError } from './errors/stepwise-error.js';
export { InvalidTransitionError } from './errors/invalid-transition-error.js';
export { JobNotFoundError } from './errors/job-not-found-error.js';
export { LeaseLostError } from './errors/lease-lost-error.js';
export { IdempotencyConflictError } from './errors/idempotency-conflict-error.js';
export type { InputIssue } from './errors/invalid-input-error.js';
export { InvalidInputError } from './errors/invalid-input-error.js';
export { UnknownJobTypeError } from './errors/unknown-job-type-error.js';
export { TransientError, ServiceUnavailableError } from './errors/transient-error.js';
export { RateLimitedError } from './errors/rate-limited-error.js';
export { StepTimeoutError } from './errors/step-timeout-error.js';
export { CancelledError } from './errors/cancelled-error.js';
export { WaitRequestedError } from './errors/wait-requested-error.js';
export { UnauthorizedError, ForbiddenError } from './errors/access-errors.js';
export { ConflictError } from './errors/conflict-error.js';
export { InternalError } from './errors/internal-error.js';
export {
  classifyError,
  errorFromHttpStatus,
  isTransientInfrastructureError,
  isTransientPostgresCode,
  parseRetryAfter,
} from './errors/classify-error.js';

export { canonicalJson } from './hash/canonical-json.js';
export { idempotencyHash, requestHash, sha256Hex } from './hash/idempotency-hash.js';

export type { Db, Tx, DbOrTx, DbHandle, CreateDbOptions } from './db/client.js';
export { createDb } from './db/client.js';
export { runMigrations, ensureDatabase, migrationsApplied, MIGRATIONS_FOLDER } from './db/migrate.js';
export * as schema from './db/schema.js';
export type { NewJob, CreateJobResult } from './db/ops/create-job.js';
export { createJob, DEFAULT_JOB_TTL_MS } from './db/ops/create-job.js';
export type { AuditRecord, AuditOutcome } from './db/ops/append-audit.js';
export { appendAudit, appendAuditBatch } from './db/ops/append-audit.js';
export { AUDIT_ARGS_MAX_BYTES, auditArgs, REDACTED, redact } from './audit/redact.js';
export type { AuditBufferOptions, AuditSink } from './audit/audit-buffer.js';
export { AuditBuffer } from './audit/audit-buffer.js';
export type { AuditEntry, AuditQuery } from './db/ops/query-audit.js';
export { queryAudit } from './db/ops/query-audit.js';
export type { ClaimedJob } from './db/ops/claim-job.js';
export { claimJob } from './db/ops/claim-job.js';
export type { Fence, FencedAck, StepIdentity, ProgressValue, Checkpoint } from './db/ops/fenced-writes.js';
export { writeIntent, writeCheckpoint, writeProgress, writeCursor, renewLease, releaseLease } from './db/ops/fenced-writes.js';
export type { FinishArgs, StepOutcome } from './db/ops/finish-job.js';
export { finishJob } from './db/ops/finish-job.js';
export type { CancelOutcome } from './db/ops/request-cancel.js';
export { requestCancel } from './db/ops/request-cancel.js';
export { getJob, getJobSteps, getJobForWorker } from './db/ops/get-job.js';
export type { ListJobsArgs } from './db/ops/list-jobs.js';
export { listJobs } from './db/ops/list-jobs.js';

export { createRedis } from './queue/redis.js';
export type { DispatchData } from './queue/job-queue.js';
export { QUEUE_NAME, createJobQueue, enqueueJob } from './queue/job-queue.js';
export { channels } from './queue/channels.js';
export type { JobUpdate, JobUpdateInput, CancelNotice } from './queue/job-update.js';
export { JobUpdateSchema, CancelNoticeSchema } from './queue/job-update.js';
export { JobUpdateBus } from './queue/job-update-bus.js';

export type { Logger, LoggerOptions } from './log/logger.js';
export { createLogger, REDACT_PATHS } from './log/logger.js';

export { parseEnv } from './config/parse-env.js';
export type { BaseConfig } from './config/base-config.js';
export { BaseConfigSchema } from './config/base-config.js';

export type { BlobRef, BlobStore } from './blob/blob-store.js';
export { BlobRefSchema, FsBlobStore } from './blob/blob-store.js';
export { ProgressThrottle } from './progress/progress-throttle.js';

export * from './tools/schemas.js';
export { toJobView, toStepView, summarizeJob, pollAfterMs } from './tools/job-view.js';

export type { Principal, Scope } from './auth/principal.js';
export { SCOPES, ScopeSchema, hasScope } from './auth/principal.js';
export type { CallMeta, JobServiceOptions, OnUpdate, StartQuota } from './service/job-service.js';
export { JobService } from './service/job-service.js';
export { checkJsonLimits, checkStorableStrings } from './service/json-limits.js';
export type { WaitDecision, RespondArgs } from './db/ops/respond-to-job.js';
export { respondToJob } from './db/ops/respond-to-job.js';
export type { DispatchCandidate } from './db/ops/sweep-ops.js';
export { findDispatchCandidates, expireJobs, endOverdueJobs, purgeCheckpoints, purgeJobs } from './db/ops/sweep-ops.js';
export type { CrashHook } from './crash-hook.js';
export { crashHookFromEnv } from './crash-hook.js';
export { reopenFailedJob } from './db/ops/reopen-failed-job.js';
export type { ApiKeyId } from './auth/auth-ids.js';
export { ApiKeyIdSchema, newApiKeyId, newPrincipalId } from './auth/auth-ids.js';
export type { GeneratedApiKey } from './auth/api-key.js';
export {
  generateApiKey,
  parseApiKey,
  looksLikeApiKey,
  hashApiKeySecret,
  verifyApiKeySecret,
  API_KEY_PREFIX_PATTERN,
} from './auth/api-key.js';
export type { PrincipalRecord, ApiKeyRecord } from './auth/principal-record.js';
export { PrincipalNameSchema, effectiveScopes, knownScopes } from './auth/principal-record.js';
export type { NewPrincipal } from './db/ops/create-principal.js';
export { createPrincipal } from './db/ops/create-principal.js';
export type { NewApiKey, CreatedApiKey } from './db/ops/create-api-key.js';
export { createApiKey } from './db/ops/create-api-key.js';
export { revokeApiKey } from './db/ops/revoke-api-key.js';
export type { ApiKeyAuthResult, ApiKeyRefusal } from './db/ops/authenticate-api-key.js';
export { authenticateApiKey, LAST_USED_RESOLUTION_S } from './db/ops/authenticate-api-key.js';
export type { ApiKeyListing } from './db/ops/list-api-keys.js';
export { listApiKeys } from './db/ops/list-api-keys.js';
export { createFirstApiKey } from './db/ops/create-first-api-key.js';
export type { PrincipalGrant } from './db/ops/principal-grant.js';
