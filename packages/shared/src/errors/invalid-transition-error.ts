import { StepwiseError } from './stepwise-error.js';

/** A code path asked the state machine for an edge it does not have: a bug, never the caller's fault. */
export class InvalidTransitionError extends StepwiseError {
  constructor(from: string, to: string) {
    super('invalid_transition', 'internal', `A job cannot move from ${from} to ${to}.`, { details: { from, to } });
  }
}
