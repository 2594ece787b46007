import { describe, it, expect } from 'vitest';
import { z } from 'zod';
import { defineJob } from './define-job.js';
import type { StepDefinition } from './define-job.js';

const step = <I>(name: string, effect: StepDefinition<I>['effect'] = 'none'): StepDefinition<I> => ({
  name,
  effect,
  run: async () => name,
});

const base = {
  description: 'test job',
  input: z.object({ n: z.number().int().min(1).default(2) }),
};

describe('defineJob: type names', () => {
  it.each(['demo.steps', 'files.index', 'a.b.c', 'mcp.chain', 'files-x.index_v2', 'a1.b2'])('accepts %s', (name) => {
    expect(defineJob({ ...base, name, steps: [step('one')] }).name).toBe(name);
  });

  it.each(['demo', 'Demo.steps', 'demo.Steps', 'demo.', '.steps', '1demo.steps', 'demo.1steps', 'demo steps', 'demo..steps', '', 'demo:steps', 'demo.st eps'])(
    'rejects %j',
    (name) => {
      expect(() => defineJob({ ...base, name, steps: [step('one')] })).toThrow(/namespace\.verb/);
    },
  );
});

describe('defineJob: plan', () => {
  it('returns the steps in order', () => {
    const t = defineJob({ ...base, name: 'demo.x', steps: [step('fetch'), step('transform', 'idempotent'), step('store', 'unsafe')] });
    expect(t.plan({ n: 1 }).map((s) => [s.name, s.effect])).toEqual([
      ['fetch', 'none'],
      ['transform', 'idempotent'],
      ['store', 'unsafe'],
    ]);
  });

  it('builds the plan from the input when steps is a function', () => {
    const t = defineJob({
      ...base,
      name: 'demo.dyn',
      steps: (input) => Array.from({ length: input.n }, (_, i) => step(`s${i + 1}`)),
    });
    expect(t.plan({ n: 3 }).map((s) => s.name)).toEqual(['s1', 's2', 's3']);
    expect(t.plan({ n: 1 }).map((s) => s.name)).toEqual(['s1']);
  });

  it('rejects duplicate step names', () => {
    const t = defineJob({ ...base, name: 'demo.dup', steps: [step('a'), step('b'), step('a')] });
    expect(() => t.plan({ n: 1 })).toThrow(/duplicate step "a"/);
  });

  it.each(['', 'Upper', 'has space', '-lead', '.lead', 'a:b', 'x'.repeat(65)])('rejects bad step name %j', (name) => {
    const t = defineJob({ ...base, name: 'demo.bad', steps: [step('ok'), step(name)] });
    expect(() => t.plan({ n: 1 })).toThrow(/bad step name/);
  });

  it.each(['a', '0', 'step-001', 'fetch.page_2', 'x'.repeat(64)])('accepts step name %j', (name) => {
    const t = defineJob({ ...base, name: 'demo.ok', steps: [step(name)] });
    expect(t.plan({ n: 1 })[0]?.name).toBe(name);
  });

  it('rejects an empty plan', () => {
    const t = defineJob({ ...base, name: 'demo.empty', steps: [] });
    expect(() => t.plan({ n: 1 })).toThrow(/no steps/);
  });
});

describe('defineJob: metadata and result', () => {
  it('defaults the title to the name and keeps description, schemas and retry', () => {
    const retry = { maxAttempts: 5 };
    const output = z.object({ ok: z.boolean() });
    const t = defineJob({ ...base, name: 'demo.meta', output, retry, steps: [step('a')] });
    expect(t.title).toBe('demo.meta');
    expect(t.description).toBe('test job');
    expect(t.input).toBe(base.input);
    expect(t.output).toBe(output);
    expect(t.retry).toBe(retry);
    expect(t.onCancel).toBeUndefined();
    expect(defineJob({ ...base, name: 'demo.t', title: 'Nice', steps: [step('a')] }).title).toBe('Nice');
    expect(defineJob({ ...base, name: 'demo.t', steps: [step('a')] }).output).toBeUndefined();
  });

  it("defaults the result to the last step's output", () => {
    const t = defineJob({ ...base, name: 'demo.r', steps: [step('a'), step('b')] });
    expect(t.result({ a: 1, b: { last: true } }, { n: 1 })).toEqual({ last: true });
    // The last step of a dynamic plan depends on the input.
    const d = defineJob({ ...base, name: 'demo.d', steps: (i) => Array.from({ length: i.n }, (_, k) => step(`s${k + 1}`)) });
    expect(d.result({ s1: 'one', s2: 'two', s3: 'three' }, { n: 2 })).toBe('two');
  });

  it('uses a custom result function with outputs and input', () => {
    const t = defineJob({
      ...base,
      name: 'demo.c',
      steps: [step('a'), step('b')],
      result: (outputs, input) => ({ sum: (outputs.a as number) + (outputs.b as number), n: input.n }),
    });
    expect(t.result({ a: 2, b: 3 }, { n: 7 })).toEqual({ sum: 5, n: 7 });
  });
});
