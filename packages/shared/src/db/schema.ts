import { sql } from 'drizzle-orm';
import {
  bigserial,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { JOB_STATUSES, STEP_EFFECTS, STEP_STATUSES } from '../job/status.js';

// The only place tables are defined. Migrations in ../../drizzle are generated from this file.

export const jobStatus = pgEnum('job_status', JOB_STATUSES);
export const stepStatus = pgEnum('step_status', STEP_STATUSES);
export const stepEffect = pgEnum('step_effect', STEP_EFFECTS);

const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const jobs = pgTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    principalId: text('principal_id').notNull(),
    type: text('type').notNull(),
    input: jsonb('input').notNull(),
    idempotencyKey: text('idempotency_key'),
    // Nulled when the dedup window ends, which frees the unique slot for a new job.
    idempotencyHash: text('idempotency_hash'),
    requestHash: text('request_hash').notNull(),
    // The BullMQ jobId: the idempotency hash at creation, kept even after the dedup slot is freed.
    dispatchId: text('dispatch_id').notNull(),
    dedupExpiresAt: tstz('dedup_expires_at').notNull(),

    status: jobStatus('status').notNull().default('pending'),
    version: integer('version').notNull().default(0),
    plan: jsonb('plan').notNull(),
    currentStep: text('current_step'),
    stepsDone: integer('steps_done').notNull().default(0),

    progressDone: doublePrecision('progress_done'),
    progressTotal: doublePrecision('progress_total'),
    progressMessage: text('progress_message'),
    progressUpdatedAt: tstz('progress_updated_at'),

    result: jsonb('result'),
    error: jsonb('error'),

    attempt: integer('attempt').notNull().default(1),
    maxAttempts: integer('max_attempts').notNull(),
    attemptGroup: integer('attempt_group').notNull().default(1),
    nextRunAt: tstz('next_run_at'),

    cancelRequestedAt: tstz('cancel_requested_at'),
    cancelReason: text('cancel_reason'),
    waitingReason: text('waiting_reason'),
    waitingDetails: jsonb('waiting_details'),
    // Set by respond_to_job: a waiting job may be claimed again (waiting → running).
    resumeRequestedAt: tstz('resume_requested_at'),
    // A wait (e.g. for approval) that nobody answers by then ends the job (sweeper).
    waitingExpiresAt: tstz('waiting_expires_at'),
    // Per-job deadline: past it the job fails or is cancelled (sweeper), whatever it is doing.
    deadlineAt: tstz('deadline_at'),
    deadlineAction: text('deadline_action'),

    leaseOwner: text('lease_owner'),
    leaseFence: integer('lease_fence').notNull().default(0),
    leaseExpiresAt: tstz('lease_expires_at'),

    traceId: text('trace_id'),
    createdAt: tstz('created_at').notNull().defaultNow(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
    startedAt: tstz('started_at'),
    finishedAt: tstz('finished_at'),
    expiresAt: tstz('expires_at'),
  },
  (t) => [
    uniqueIndex('jobs_tenant_idempotency_hash_uq').on(t.tenantId, t.idempotencyHash),
    index('jobs_tenant_created_idx').on(t.tenantId, t.id),
    // Per-tenant running count for dispatch fairness (claim-job.ts).
    index('jobs_tenant_running_idx').on(t.tenantId).where(sql`${t.status} = 'running'`),
    index('jobs_finished_idx').on(t.finishedAt).where(sql`${t.finishedAt} is not null`),
    index('jobs_active_idx')
      .on(t.status, t.nextRunAt)
      .where(sql`${t.status} in ('pending', 'running', 'waiting', 'retrying')`),
  ],
);

export const jobSteps = pgTable(
  'job_steps',
  {
    jobId: text('job_id')
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    stepName: text('step_name').notNull(),
    position: integer('position').notNull(),
    status: stepStatus('status').notNull().default('pending'),
    effect: stepEffect('effect').notNull(),
    attempt: integer('attempt').notNull().default(1),
    attemptGroup: integer('attempt_group').notNull().default(1),
    idempotencyKey: text('idempotency_key').notNull(),
    paramsDigest: text('params_digest'),
    output: jsonb('output'),
    outputSha256: text('output_sha256'),
    cursor: jsonb('cursor'),
    error: jsonb('error'),
    // A person's decision on this step ({ decision, by, at, note }); approved steps run without asking again.
    approval: jsonb('approval'),
    leaseFence: integer('lease_fence').notNull(),
    startedAt: tstz('started_at'),
    finishedAt: tstz('finished_at'),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.stepName] })],
);

export const jobEvents = pgTable(
  'job_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    jobId: text('job_id').notNull(),
    tenantId: text('tenant_id').notNull(),
    at: tstz('at').notNull().defaultNow(),
    kind: text('kind').notNull(),
    fromStatus: jobStatus('from_status'),
    toStatus: jobStatus('to_status'),
    workerId: text('worker_id'),
    reason: text('reason'),
    version: integer('version'),
    details: jsonb('details'),
  },
  (t) => [index('job_events_job_idx').on(t.jobId, t.id)],
);

/** Who can call: a named identity in one tenant with a set of scopes (DESIGN §8). */
export const principals = pgTable(
  'principals',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    name: text('name').notNull(),
    scopes: text('scopes').array().notNull(),
    createdAt: tstz('created_at').notNull().defaultNow(),
    disabledAt: tstz('disabled_at'),
  },
  (t) => [uniqueIndex('principals_tenant_name_uq').on(t.tenantId, t.name)],
);

/** API keys: only a hash is stored, found by a short public prefix. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    principalId: text('principal_id')
      .notNull()
      .references(() => principals.id, { onDelete: 'cascade' }),
    tenantId: text('tenant_id').notNull(),
    name: text('name').notNull(),
    prefix: text('prefix').notNull(),
    hash: text('hash').notNull(),
    /** Narrower than the principal's scopes when set. */
    scopes: text('scopes').array(),
    createdAt: tstz('created_at').notNull().defaultNow(),
    expiresAt: tstz('expires_at'),
    revokedAt: tstz('revoked_at'),
    lastUsedAt: tstz('last_used_at'),
  },
  (t) => [uniqueIndex('api_keys_prefix_uq').on(t.prefix)],
);

/** What remains of a job after retention deletes it: enough to answer "what happened to X". */
export const jobTombstones = pgTable(
  'job_tombstones',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    principalId: text('principal_id').notNull(),
    type: text('type').notNull(),
    status: jobStatus('status').notNull(),
    resultSha256: text('result_sha256'),
    resultSummary: text('result_summary'),
    errorCode: text('error_code'),
    createdAt: tstz('created_at').notNull(),
    finishedAt: tstz('finished_at'),
    deletedAt: tstz('deleted_at').notNull().defaultNow(),
  },
  (t) => [index('job_tombstones_tenant_idx').on(t.tenantId, t.id)],
);

export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: tstz('at').notNull().defaultNow(),
    tenantId: text('tenant_id').notNull(),
    principalId: text('principal_id').notNull(),
    clientName: text('client_name'),
    clientVersion: text('client_version'),
    action: text('action').notNull(),
    targetJobId: text('target_job_id'),
    argsDigest: text('args_digest'),
    argsRedacted: jsonb('args_redacted'),
    outcome: text('outcome').notNull(),
    errorCode: text('error_code'),
    requestId: text('request_id'),
    traceId: text('trace_id'),
  },
  (t) => [
    index('audit_events_tenant_at_idx').on(t.tenantId, t.at),
    index('audit_events_job_idx').on(t.targetJobId),
  ],
);
