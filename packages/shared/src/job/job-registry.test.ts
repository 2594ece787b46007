import { describe, it, expect } from 'vitest';
import { z } from 'zod';
import { JobRegistry } from './job-registry.js';
import { defineJob } from './define-job.js';
import type { JobType, StepDefinition } from './define-job.js';
import { UnknownJobTypeError } from '../errors/unknown-job-type-error.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';

const step = (name: string, effect: StepDefinition<unknown>['effect'] = 'none'): StepDefinition<unknown> => ({
  name,
  effect,
  run: async () => null,
});

const greet = defineJob({
  name: 'demo.greet',
  description: 'greets',
  input: z.object({
    who: z.string().min(1),
    times: z.number().int().min(1).max(5).default(1),
    opts: z.object({ loud: z.boolean() }).optional(),
  }),
  steps: (input) => [step('compose'), ...Array.from({ length: input.times }, (_, i) => step(`say-${i + 1}`, 'unsafe'))],
});

const other = defineJob({ name: 'alpha.one', description: 'x', input: z.object({}), steps: [step('only')] });

const brokenPlan = defineJob({
  name: 'demo.broken',
  description: 'plan fails',
  input: z.object({ dup: z.boolean() }),
  steps: (input) => (input.dup ? [step('a'), step('a')] : [step('a')]),
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e: unknown) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('JobRegistry', () => {
  it('registers types and lists them sorted by name', () => {
    const r = new JobRegistry([greet, other]);
    expect(r.names()).toEqual(['alpha.one', 'demo.greet']);
    expect(r.list().map((t) => t.name)).toEqual(['alpha.one', 'demo.greet']);
    expect(r.has('demo.greet')).toBe(true);
    expect(r.has('demo.nope')).toBe(false);
    expect(r.get('demo.greet')).toBe(greet);
  });

  it('register() chains and rejects a second type with the same name', () => {
    const r = new JobRegistry();
    expect(r.register(greet).register(other)).toBe(r);
    const twin: JobType = { ...other };
    expect(() => r.register(twin)).toThrow(/registered twice/);
    expect(() => new JobRegistry([greet, greet])).toThrow(/demo\.greet registered twice/);
    expect(r.names()).toEqual(['alpha.one', 'demo.greet']);
  });

  it('get() of an unknown type throws UnknownJobTypeError naming the known types', () => {
    const r = new JobRegistry([greet, other]);
    const e = catchError(() => r.get('demo.missing'));
    expect(e).toBeInstanceOf(UnknownJobTypeError);
    const u = e as UnknownJobTypeError;
    expect(u.code).toBe('unknown_job_type');
    expect(u.category).toBe('invalid_input');
    expect(u.retryable).toBe(false);
    expect(u.details).toEqual({ type: 'demo.missing', known: ['alpha.one', 'demo.greet'] });
    expect(u.message).toContain('demo.missing');
    expect(u.message).toContain('alpha.one, demo.greet');
  });

  it('prepare() of an unknown type throws UnknownJobTypeError', () => {
    expect(() => new JobRegistry([greet]).prepare('nope.nope', {})).toThrow(UnknownJobTypeError);
  });

  it('prepare() parses the input (applying defaults) and freezes the plan as {name, effect}', () => {
    const r = new JobRegistry([greet]);
    const p = r.prepare('demo.greet', { who: 'Ada', times: 2 });
    expect(p.type).toBe(greet);
    expect(p.input).toEqual({ who: 'Ada', times: 2 });
    expect(p.plan).toEqual([
      { name: 'compose', effect: 'none' },
      { name: 'say-1', effect: 'unsafe' },
      { name: 'say-2', effect: 'unsafe' },
    ]);
    expect(r.prepare('demo.greet', { who: 'Ada' }).input).toEqual({ who: 'Ada', times: 1 });
  });

  it('prepare() strips unknown keys the schema does not allow through', () => {
    const p = new JobRegistry([greet]).prepare('demo.greet', { who: 'Ada', extra: 'dropped' });
    expect(p.input).toEqual({ who: 'Ada', times: 1 });
  });

  it('prepare() with invalid input throws InvalidInputError with paths prefixed by "input."', () => {
    const r = new JobRegistry([greet]);
    const e = catchError(() => r.prepare('demo.greet', { who: '', times: 9, opts: { loud: 'yes' } }));
    expect(e).toBeInstanceOf(InvalidInputError);
    const err = e as InvalidInputError;
    expect(err.category).toBe('invalid_input');
    expect(err.code).toBe('invalid_input');
    const paths = err.issues.map((i) => i.path).sort();
    expect(paths).toEqual(['input.opts.loud', 'input.times', 'input.who']);
    for (const p of paths) expect(p.startsWith('input.')).toBe(true);
    expect(err.message).toContain('demo.greet');
    expect(err.message).toMatch(/and 2 more/);
    expect(err.details).toEqual({ issues: err.issues });
  });

  it('prepare() reports a missing field at its path', () => {
    const err = catchError(() => new JobRegistry([greet]).prepare('demo.greet', {})) as InvalidInputError;
    expect(err.issues.map((i) => i.path)).toEqual(['input.who']);
  });

  it('prepare() reports a wrong root type at "input"', () => {
    const err = catchError(() => new JobRegistry([greet]).prepare('demo.greet', 'not an object')) as InvalidInputError;
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err.issues[0]?.path).toBe('input');
  });

  it('prepare() turns a plan that cannot be built into InvalidInputError', () => {
    const r = new JobRegistry([brokenPlan]);
    expect(r.prepare('demo.broken', { dup: false }).plan).toEqual([{ name: 'a', effect: 'none' }]);
    const e = catchError(() => r.prepare('demo.broken', { dup: true }));
    expect(e).toBeInstanceOf(InvalidInputError);
    expect((e as InvalidInputError).message).toMatch(/Cannot plan demo\.broken.*duplicate step "a"/);
  });
});
