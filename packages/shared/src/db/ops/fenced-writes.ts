import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { JobId } from '../../ids.js';
import type { StepEffect } from '../../job/status.js';
import type { ErrorInfo } from '../../errors/stepwise-error.js';
import { LeaseLostError } from '../../errors/lease-lost-error.js';
import { jsonb, rowsOf } from '../sql-helpers.js';

// Every write a worker makes while it holds a job. Each statement is guarded by
// `lease_fence = $fence AND status = 'running'`; zero rows means the lease is gone and
// LeaseLostError is thrown so the caller stops at once. Each returns `cancel_requested_at`
// so cancellation is noticed on every round-trip without an extra query.

export interface Fence {
  jobId: JobId;
  fence: number;
}

export interface FencedAck {
  cancelRequestedAt: Date | null;
}

function ack(result: unknown, f: Fence): FencedAck {
  const row = rowsOf(result)[0];
  if (!row) throw new LeaseLostError(f.jobId, f.fence);
  const at = row.cancel_requested_at;
  return { cancelRequestedAt: at == null ? null : at instanceof Date ? at : new Date(String(at)) };
}

export interface StepIdentity {
  name: string;
  position: number;
  effect: StepEffect;
  attempt: number;
  attemptGroup: number;
  idempotencyKey: string;
}

export interface ProgressValue {
  done: number;
  total: number | null;
  message: string | null;
}

/** Contract (step protocol 4): the step becomes `started` with its attempt and idempotency key. */
export async function writeIntent(db: DbOrTx, f: Fence, step: StepIdentity): Promise<FencedAck> {
  return ack(
    await db.execute(sql`
      with j as (
        update jobs set current_step = ${step.name}, attempt = ${step.attempt}, updated_at = now()
        where id = ${f.jobId} and lease_fence = ${f.fence} and status = 'running'
        returning id, cancel_requested_at
      ), s as (
        insert into job_steps (job_id, step_name, position, status, effect, attempt, attempt_group,
                               idempotency_key, lease_fence, started_at, updated_at)
        select id, ${step.name}, ${step.position}, 'started', ${step.effect}, ${step.attempt}, ${step.attemptGroup},
               ${step.idempotencyKey}, ${f.fence}, now(), now()
        from j
        on conflict (job_id, step_name) do update set
          status = 'started', attempt = excluded.attempt, attempt_group = excluded.attempt_group,
          idempotency_key = excluded.idempotency_key, lease_fence = excluded.lease_fence,
          error = null, started_at = now(), updated_at = now()
      )
      select cancel_requested_at from j`),
    f,
  );
}

export interface Checkpoint {
  step: StepIdentity;
  output: unknown;
  outputSha256: string;
  startedAt: Date;
  /** Job advance, written in the same statement (step protocol 7 + 8). */
  stepsDone: number;
  nextStep: string | null;
  progress: ProgressValue;
}

/**
 * Contract (step protocol 7+8): the step becomes `succeeded` with its output and the job advances
 * (steps_done, current_step, progress) in ONE statement, so "checkpointed but not advanced" cannot
 * be observed and costs no extra transaction.
 */
export async function writeCheckpoint(db: DbOrTx, f: Fence, c: Checkpoint): Promise<FencedAck> {
  return ack(
    await db.execute(sql`
      with j as (
        update jobs set steps_done = ${c.stepsDone}, current_step = ${c.nextStep}, attempt = 1,
          progress_done = ${c.progress.done}, progress_total = ${c.progress.total},
          progress_message = ${c.progress.message}, progress_updated_at = now(), updated_at = now()
        where id = ${f.jobId} and lease_fence = ${f.fence} and status = 'running'
        returning id, cancel_requested_at
      ), s as (
        ${stepSucceededInsert(f, c)}
      )
      select cancel_requested_at from j`),
    f,
  );
}

/** The `job_steps` upsert for a succeeded step, shared by writeCheckpoint and finishJob. */
export function stepSucceededInsert(f: Fence, c: Pick<Checkpoint, 'step' | 'output' | 'outputSha256' | 'startedAt'>) {
  return sql`
        insert into job_steps (job_id, step_name, position, status, effect, attempt, attempt_group, idempotency_key,
                               output, output_sha256, lease_fence, started_at, finished_at, updated_at)
        select id, ${c.step.name}, ${c.step.position}, 'succeeded', ${c.step.effect}, ${c.step.attempt},
               ${c.step.attemptGroup}, ${c.step.idempotencyKey}, ${jsonb(c.output)}, ${c.outputSha256}, ${f.fence},
               ${c.startedAt.toISOString()}::timestamptz, now(), now()
        from j
        on conflict (job_id, step_name) do update set
          status = 'succeeded', attempt = excluded.attempt, attempt_group = excluded.attempt_group,
          idempotency_key = excluded.idempotency_key, output = excluded.output,
          output_sha256 = excluded.output_sha256, lease_fence = excluded.lease_fence, error = null,
          cursor = null, finished_at = now(), updated_at = now()`;
}

/** The `job_steps` upsert for a failed attempt. */
export function stepFailedInsert(f: Fence, step: StepIdentity, error: ErrorInfo, startedAt: Date) {
  return sql`
        insert into job_steps (job_id, step_name, position, status, effect, attempt, attempt_group, idempotency_key,
                               error, lease_fence, started_at, finished_at, updated_at)
        select id, ${step.name}, ${step.position}, 'failed', ${step.effect}, ${step.attempt}, ${step.attemptGroup},
               ${step.idempotencyKey}, ${jsonb(error)}, ${f.fence}, ${startedAt.toISOString()}::timestamptz, now(), now()
        from j
        on conflict (job_id, step_name) do update set
          status = 'failed', attempt = excluded.attempt, error = excluded.error,
          lease_fence = excluded.lease_fence, finished_at = now(), updated_at = now()`;
}

/** The `job_steps` upsert for a step about to wait for a decision; keeps any decision already made. */
export function stepAwaitingInsert(f: Fence, step: StepIdentity) {
  return sql`
        insert into job_steps (job_id, step_name, position, status, effect, attempt, attempt_group, idempotency_key,
                               lease_fence, updated_at)
        select id, ${step.name}, ${step.position}, 'pending', ${step.effect}, ${step.attempt}, ${step.attemptGroup},
               ${step.idempotencyKey}, ${f.fence}, now()
        from j
        on conflict (job_id, step_name) do update set
          status = 'pending', lease_fence = excluded.lease_fence, updated_at = now()`;
}

/** Contract: persists throttled progress (DESIGN §7). */
export async function writeProgress(db: DbOrTx, f: Fence, p: ProgressValue): Promise<FencedAck> {
  return ack(
    await db.execute(sql`
      update jobs set progress_done = ${p.done}, progress_total = ${p.total}, progress_message = ${p.message},
        progress_updated_at = now(), updated_at = now()
      where id = ${f.jobId} and lease_fence = ${f.fence} and status = 'running'
      returning cancel_requested_at`),
    f,
  );
}

/** Contract: stores a long step's resume point, so a crash resumes mid-step (DESIGN §2 `saveCursor`). */
export async function writeCursor(db: DbOrTx, f: Fence, stepName: string, cursor: unknown): Promise<FencedAck> {
  return ack(
    await db.execute(sql`
      with j as (
        select id, cancel_requested_at from jobs
        where id = ${f.jobId} and lease_fence = ${f.fence} and status = 'running'
        for update
      ), s as (
        update job_steps set cursor = ${jsonb(cursor)}, updated_at = now()
        where job_id = (select id from j) and step_name = ${stepName}
      )
      select cancel_requested_at from j`),
    f,
  );
}

/** Contract: extends the lease by `leaseMs` from now (the heartbeat). */
export async function renewLease(db: DbOrTx, f: Fence, leaseMs: number): Promise<FencedAck> {
  return ack(
    await db.execute(sql`
      update jobs set lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
      where id = ${f.jobId} and lease_fence = ${f.fence} and status = 'running'
      returning cancel_requested_at`),
    f,
  );
}

/**
 * Contract: ends the lease now without changing status, so another worker may claim the job at
 * once (graceful shutdown). The fence stays: this worker can no longer write either way.
 */
export async function releaseLease(db: DbOrTx, f: Fence): Promise<void> {
  await db.execute(sql`
    update jobs set lease_expires_at = now(), lease_owner = null
    where id = ${f.jobId} and lease_fence = ${f.fence} and status = 'running'`);
}
