import { sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { DbOrTx } from '../client.js';
import type { Job } from '../../job/job.js';
import type { JobStatus } from '../../job/status.js';
import { isTerminal } from '../../job/status.js';
import { assertTransition } from '../../job/transitions.js';
import type { ErrorInfo } from '../../errors/stepwise-error.js';
import { LeaseLostError } from '../../errors/lease-lost-error.js';
import type { WorkerId } from '../../ids.js';
import { jobFromRow } from '../rows.js';
import { jsonb, rowsOf } from '../sql-helpers.js';
import type { Checkpoint, Fence, ProgressValue, StepIdentity } from './fenced-writes.js';
import { stepAwaitingInsert, stepFailedInsert, stepSucceededInsert } from './fenced-writes.js';

export type StepOutcome =
  | { kind: 'succeeded'; checkpoint: Pick<Checkpoint, 'step' | 'output' | 'outputSha256' | 'startedAt'> }
  | { kind: 'failed'; step: StepIdentity; error: ErrorInfo; startedAt: Date }
  /** The step has not run and is waiting for a decision (approval): its row exists so the decision has a place. */
  | { kind: 'awaiting'; step: StepIdentity };

export interface FinishArgs {
  to: Exclude<JobStatus, 'pending' | 'running'>;
  workerId: WorkerId;
  reason: string | null;
  result?: unknown;
  error?: ErrorInfo | null;
  /** For `retrying`: when the next attempt is due. */
  nextRunAt?: Date | null;
  /** For `retrying`: the attempt number the next run will be. */
  nextAttempt?: number;
  waitingReason?: string | null;
  waitingDetails?: unknown;
  /** For `waiting`: when an unanswered wait ends the job (sweeper). */
  waitingExpiresAt?: Date | null;
  stepsDone?: number;
  progress?: ProgressValue;
  /** The last step's checkpoint or failure, written in the same statement. */
  step?: StepOutcome;
}

/**
 * Contract: ONE guarded statement moves `running → to` for the lease holder (`lease_fence = fence`),
 * releases the lease, records the `job_events` row, and writes the final step checkpoint or
 * failure when given. Throws LeaseLostError when the fence no longer matches.
 */
export async function finishJob(db: DbOrTx, f: Fence, a: FinishArgs): Promise<Job> {
  assertTransition('running', a.to);
  const terminal = isTerminal(a.to);
  let stepCte: SQL = sql``;
  if (a.step?.kind === 'succeeded') stepCte = sql`, s as (${stepSucceededInsert(f, a.step.checkpoint)})`;
  if (a.step?.kind === 'failed') stepCte = sql`, s as (${stepFailedInsert(f, a.step.step, a.step.error, a.step.startedAt)})`;
  if (a.step?.kind === 'awaiting') stepCte = sql`, s as (${stepAwaitingInsert(f, a.step.step)})`;
  const progress = a.progress;
  const rows = rowsOf(
    await db.execute(sql`
      with j as (
        update jobs set
          status = ${a.to},
          version = version + 1,
          updated_at = now(),
          result = ${a.result === undefined ? sql`result` : jsonb(a.result)},
          error = ${a.error === undefined ? sql`error` : jsonb(a.error)},
          finished_at = ${terminal ? sql`now()` : sql`null`},
          next_run_at = ${a.nextRunAt ? sql`${a.nextRunAt.toISOString()}::timestamptz` : sql`null`},
          attempt = ${a.nextAttempt ?? sql`attempt`},
          waiting_reason = ${a.waitingReason ?? null},
          waiting_details = ${jsonb(a.waitingDetails)},
          waiting_expires_at = ${a.waitingExpiresAt ? sql`${a.waitingExpiresAt.toISOString()}::timestamptz` : sql`null`},
          steps_done = ${a.stepsDone ?? sql`steps_done`},
          ${progress ? sql`progress_done = ${progress.done}, progress_total = ${progress.total}, progress_message = ${progress.message}, progress_updated_at = now(),` : sql``}
          ${a.to === 'succeeded' ? sql`current_step = null,` : sql``}
          lease_owner = null,
          lease_expires_at = null
        where id = ${f.jobId} and lease_fence = ${f.fence} and status = 'running'
        returning *
      ), ev as (
        insert into job_events (job_id, tenant_id, kind, from_status, to_status, worker_id, reason, version, details)
        select id, tenant_id, 'transition', 'running', status, ${a.workerId}, ${a.reason}, version,
               ${jsonb(a.error ? { error: a.error } : null)}
        from j
      )${stepCte}
      select * from j`),
  );
  const row = rows[0];
  if (!row) throw new LeaseLostError(f.jobId, f.fence);
  return jobFromRow(row);
}
