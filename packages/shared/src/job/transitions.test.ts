import { describe, it, expect } from 'vitest';
import { JOB_STATUSES, TERMINAL_STATUSES, isTerminal } from './status.js';
import type { JobStatus } from './status.js';
import { TRANSITIONS, assertTransition, canReopen, canTransition, sourcesOf } from './transitions.js';
import { InvalidTransitionError } from '../errors/invalid-transition-error.js';
import { StepwiseError } from '../errors/stepwise-error.js';

// Written out by hand from DESIGN §2, deliberately NOT derived from TRANSITIONS:
//   pending → running | cancelled | failed   (failed: TTL/deadline passed before it ran; proposed
//                                             as an addition to DESIGN §2 in the issue note)
//   running → succeeded | failed | cancelled | waiting | retrying
//   waiting → running | cancelled | failed
//   retrying → running | cancelled | failed
const EXPECTED_EDGES: ReadonlySet<string> = new Set([
  'pending->running',
  'pending->cancelled',
  'pending->failed',
  'running->succeeded',
  'running->failed',
  'running->cancelled',
  'running->waiting',
  'running->retrying',
  'waiting->running',
  'waiting->cancelled',
  'waiting->failed',
  'retrying->running',
  'retrying->cancelled',
  'retrying->failed',
]);

const ALL_STATUSES: readonly JobStatus[] = ['pending', 'running', 'waiting', 'retrying', 'succeeded', 'failed', 'cancelled'];

const pairs: [JobStatus, JobStatus, boolean][] = [];
for (const from of ALL_STATUSES) {
  for (const to of ALL_STATUSES) pairs.push([from, to, EXPECTED_EDGES.has(`${from}->${to}`)]);
}

describe('job state machine', () => {
  it('knows exactly the seven DESIGN §2 statuses', () => {
    expect([...JOB_STATUSES].sort()).toEqual([...ALL_STATUSES].sort());
    expect([...TERMINAL_STATUSES].sort()).toEqual(['cancelled', 'failed', 'succeeded']);
  });

  it('covers all 49 (from, to) pairs', () => {
    expect(pairs).toHaveLength(49);
    expect(pairs.filter(([, , allowed]) => allowed)).toHaveLength(EXPECTED_EDGES.size);
  });

  it.each(pairs)('%s → %s allowed=%s', (from, to, allowed) => {
    expect(canTransition(from, to)).toBe(allowed);
    if (allowed) {
      expect(() => assertTransition(from, to)).not.toThrow();
    } else {
      let thrown: unknown;
      try {
        assertTransition(from, to);
      } catch (e: unknown) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(InvalidTransitionError);
      expect(thrown).toBeInstanceOf(StepwiseError);
      const err = thrown as InvalidTransitionError;
      expect(err.code).toBe('invalid_transition');
      expect(err.category).toBe('internal');
      expect(err.retryable).toBe(false);
      expect(err.details).toEqual({ from, to });
    }
  });

  it('has no self-loops', () => {
    for (const s of ALL_STATUSES) expect(canTransition(s, s)).toBe(false);
  });

  it('gives terminal statuses no exits, and non-terminal ones at least one', () => {
    for (const s of ALL_STATUSES) {
      if (isTerminal(s)) {
        expect(TRANSITIONS[s]).toEqual([]);
        for (const to of ALL_STATUSES) expect(canTransition(s, to)).toBe(false);
      } else {
        expect(TRANSITIONS[s].length).toBeGreaterThan(0);
      }
    }
  });

  it('never returns to pending', () => {
    expect(sourcesOf('pending')).toEqual([]);
  });

  it('every terminal status is reachable from running', () => {
    for (const t of TERMINAL_STATUSES) expect(canTransition('running', t)).toBe(true);
  });

  it.each(ALL_STATUSES)('sourcesOf(%s) lists exactly the statuses with an edge into it', (to) => {
    const expected = ALL_STATUSES.filter((from) => EXPECTED_EDGES.has(`${from}->${to}`)).sort();
    expect([...sourcesOf(to)].sort()).toEqual(expected);
  });

  it('sourcesOf agrees with the hand-written expectations for the guards used in SQL', () => {
    expect([...sourcesOf('running')].sort()).toEqual(['pending', 'retrying', 'waiting']);
    expect([...sourcesOf('cancelled')].sort()).toEqual(['pending', 'retrying', 'running', 'waiting']);
    expect([...sourcesOf('failed')].sort()).toEqual(['pending', 'retrying', 'running', 'waiting']);
    expect(sourcesOf('succeeded')).toEqual(['running']);
    expect(sourcesOf('waiting')).toEqual(['running']);
    expect(sourcesOf('retrying')).toEqual(['running']);
  });

  it('TRANSITIONS has one entry per status and lists only known statuses without duplicates', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual([...ALL_STATUSES].sort());
    for (const s of ALL_STATUSES) {
      const targets = TRANSITIONS[s];
      expect(new Set(targets).size).toBe(targets.length);
      for (const t of targets) expect(ALL_STATUSES).toContain(t);
    }
  });
});

describe('reopening (retry_job)', () => {
  it.each(ALL_STATUSES)('only a failed job can be reopened: %s', (s) => {
    expect(canReopen(s)).toBe(s === 'failed');
  });
});
