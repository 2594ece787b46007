import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from './define-job.js';
import { JobRegistry } from './job-registry.js';
import { enrichInput } from './enrich-input.js';
import { InvalidInputError } from '../errors/invalid-input-error.js';
import { unsafeCast } from '../ids.js';

const ctx = { tenantId: unsafeCast.tenantId('t1'), signal: new AbortController().signal };

// The plan's effect depends on a fact only known at start_job, recorded into the input by enrich.
const Input = z.object({ target: z.string(), learned: z.enum(['none', 'unsafe']).optional() });
const typed = defineJob({
  name: 'demo.enriched',
  description: 'test',
  input: Input,
  steps: (input) => [{ name: 'call', effect: input.learned ?? 'unsafe', run: async () => null }],
  enrich: async (input) => ({ ...input, learned: input.target.startsWith('read:') ? ('none' as const) : ('unsafe' as const) }),
});
const plain = defineJob({ name: 'demo.plain', description: 'test', input: Input, steps: [{ name: 'only', effect: 'none', run: async () => null }] });
const broken = defineJob({ name: 'demo.broken', description: 'test', input: Input, steps: [{ name: 'only', effect: 'none', run: async () => null }], enrich: async () => ({ target: 7 }) as never });

describe('enrichInput', () => {
  const registry = new JobRegistry([typed, plain, broken]);

  it('stores the enriched input and plans from it', async () => {
    const prepared = registry.prepare('demo.enriched', { target: 'read:x' });
    expect(prepared.plan).toEqual([{ name: 'call', effect: 'unsafe' }]); // before enrichment: conservative
    expect(await enrichInput(prepared, ctx)).toEqual({ input: { target: 'read:x', learned: 'none' }, plan: [{ name: 'call', effect: 'none' }] });
  });

  it('returns the prepared input and plan when the type has no hook', async () => {
    const prepared = registry.prepare('demo.plain', { target: 'x' });
    expect(await enrichInput(prepared, ctx)).toEqual({ input: prepared.input, plan: prepared.plan });
  });

  it('refuses an enriched input its own schema rejects', async () => {
    await expect(enrichInput(registry.prepare('demo.broken', { target: 'x' }), ctx)).rejects.toBeInstanceOf(InvalidInputError);
  });
});
