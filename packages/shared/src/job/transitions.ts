import type { JobStatus } from './status.js';
import { JOB_STATUSES } from './status.js';
import { InvalidTransitionError } from '../errors/invalid-transition-error.js';

/**
 * The job state machine (DESIGN §2). Everything that moves a job reads this table:
 * the guarded SQL statements take their `status = ANY($from)` lists from `sourcesOf`.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  pending: ['running', 'cancelled'],
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
