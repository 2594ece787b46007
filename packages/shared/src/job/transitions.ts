import type { JobStatus } from './status.js';
import { JOB_STATUSES } from './status.js';
import { InvalidTransitionError } from '../errors/invalid-transition-error.js';

/**
 * The job state machine (DESIGN §2). Everything that moves a job reads this table:
 * the guarded SQL statements take their `status = ANY($from)` lists from `sourcesOf`.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  // pending → failed: a job whose time-to-live or deadline passed before any worker ran it.
  pending: ['running', 'cancelled', 'failed'],
  running: ['succeeded', 'failed', 'cancelled', 'waiting', 'retrying'],
  waiting: ['running', 'cancelled', 'failed'],
  retrying: ['running', 'cancelled', 'failed'],
  succeeded: [],
  failed: [],
  cancelled: [],
};

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** @throws InvalidTransitionError when the table has no edge `from → to`. */
export function assertTransition(from: JobStatus, to: JobStatus): void {
  if (!canTransition(from, to)) throw new InvalidTransitionError(from, to);
}

/** Every status from which `to` is reachable in one step; the `WHERE status = ANY(...)` guard. */
export function sourcesOf(to: JobStatus): JobStatus[] {
  return JOB_STATUSES.filter((from) => canTransition(from, to));
}

/**
 * The one way out of a terminal status, and only by an explicit person's or assistant's request
 * (retry_job, issue #4): a `failed` job is reopened as `pending` to re-run from its failed step,
 * keeping its checkpoints. Kept apart from TRANSITIONS so nothing automatic can ever take it;
 * proposed as an addition to DESIGN §2 in the issue note.
 */
export const REOPENABLE: readonly JobStatus[] = ['failed'];

export function canReopen(status: JobStatus): boolean {
  return REOPENABLE.includes(status);
}
