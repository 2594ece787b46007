import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineJob, ERROR_CATEGORIES, StepwiseError, STEP_EFFECTS } from '@stepwise/shared';
import type { StepDefinition } from '@stepwise/shared';

export const DemoStepsInputSchema = z.object({
  steps: z.number().int().min(1).max(1000).describe('How many steps to run.'),
  stepMs: z.number().int().min(0).max(600_000).default(0).describe('How long each step takes, in milliseconds.'),
  failAt: z.number().int().min(1).optional().describe('1-based step number that throws.'),
  failWith: z.enum(ERROR_CATEGORIES).default('transient').describe('Error category the failing step throws.'),
  failTimes: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Throw only on the first N attempts of that step (default: every attempt).'),
  failInGroups: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Throw only while the attempt group is at most N (retry_job starts a new group).'),
  retryAfterMs: z.number().int().min(0).optional().describe('Attach this retryAfterMs to the thrown error.'),
  effect: z.enum(STEP_EFFECTS).default('none').describe('The effect each step declares.'),
  effectUrl: z
    .url({ protocol: /^https?$/ })
    .optional()
    .describe('If set, each step POSTs to this URL with an Idempotency-Key header: a real external side effect.'),
  approveAt: z.number().int().min(1).optional().describe('1-based step number that needs a person\'s approval before it runs.'),
  requestApprovalAt: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based step number that asks for approval from inside the step (ctx.requestApproval), after its work.'),
  timeoutMs: z.number().int().min(1).optional().describe('Per-step timeout in ms (a step slower than this fails with category timeout).'),
  reconcile: z
    .boolean()
    .default(false)
    .describe('With effect "unsafe" and effectUrl: give steps a reconcile() that asks GET effectUrl/<key> whether the effect happened.'),
});
export type DemoStepsInput = z.infer<typeof DemoStepsInputSchema>;

export interface DemoStepOutput {
  step: number;
  attempt: number;
  idempotencyKey: string;
  /** Sum of the previous step's `sum` and this step number: proves outputs flow forward. */
  sum: number;
}

function output(i: number, attempt: number, idempotencyKey: string, outputs: Readonly<Record<string, unknown>>): DemoStepOutput {
  const prev = i > 1 ? (outputs[stepName(i - 1)] as DemoStepOutput | undefined) : undefined;
  return { step: i, attempt, idempotencyKey, sum: (prev?.sum ?? 0) + i };
}

function stepName(i: number): string {
  return `step-${String(i).padStart(3, '0')}`;
}

/** The external effect: one POST carrying the step's idempotency key. */
async function performEffect(url: string, key: string, body: unknown, signal: AbortSignal): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
    signal,
  });
  await res.body?.cancel();
  if (!res.ok) throw Object.assign(new Error(`effect endpoint answered ${res.status}`), { status: res.status });
}

/** Sleeps `ms` but wakes at once when the signal fires (so cancellation is seen within a tick). */
async function work(ms: number, signal: AbortSignal): Promise<void> {
  if (ms === 0) {
    signal.throwIfAborted();
    return;
  }
  const slice = 50;
  for (let left = ms; left > 0; left -= slice) {
    signal.throwIfAborted();
    await sleep(Math.min(slice, left), undefined, { signal });
  }
}

/**
 * `demo.steps`: N timed steps for tests, demos and benchmarks. Each step checks its signal,
 * reports progress, and returns a running sum built from the previous step's checkpoint.
 */
export const demoSteps = defineJob({
  name: 'demo.steps',
  title: 'Demo: timed steps',
  description:
    'Runs `steps` steps of `stepMs` milliseconds each, for trying out Stepwise. Use it to see progress, ' +
    'cancellation and retries. `failAt` makes one step throw an error of category `failWith` ' +
    '(optionally only `failTimes` times). The result is the last step output: {step, attempt, sum}.',
  input: DemoStepsInputSchema,
  steps: (input: DemoStepsInput) =>
    Array.from({ length: input.steps }, (_, k): StepDefinition<DemoStepsInput, DemoStepOutput> => {
      const i = k + 1;
      return {
        name: stepName(i),
        effect: input.effect,
        ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
        ...(input.approveAt === i
          ? {
              approval: 'required' as const,
              describeApproval: () => ({
                action: `run demo step ${i} of ${input.steps}`,
                parameters: { step: i, effect: input.effect, ...(input.effectUrl ? { effectUrl: input.effectUrl } : {}) },
                impact: input.effectUrl ? `sends one request to ${input.effectUrl}` : 'none: a demo step only sleeps',
              }),
            }
          : {}),
        async run(ctx) {
          ctx.progress(0, 1, `running step ${i}/${input.steps}`);
          await work(input.stepMs, ctx.signal);
          if (input.requestApprovalAt === i) {
            await ctx.requestApproval({ action: `finish demo step ${i}`, parameters: { step: i }, impact: 'none: a demo' });
          }
          const failing =
            input.failAt === i &&
            (input.failTimes === undefined || ctx.attempt <= input.failTimes) &&
            (input.failInGroups === undefined || ctx.attemptGroup <= input.failInGroups);
          if (failing) {
            throw new StepwiseError(`demo_${input.failWith}`, input.failWith, `Step ${i} failed on purpose (${input.failWith}).`, {
              ...(input.retryAfterMs === undefined ? {} : { retryAfterMs: input.retryAfterMs }),
            });
          }
          if (input.effectUrl) await performEffect(input.effectUrl, ctx.idempotencyKey, { jobId: ctx.jobId, step: i }, ctx.signal);
          ctx.progress(1, 1, `finished step ${i}/${input.steps}`);
          return output(i, ctx.attempt, ctx.idempotencyKey, ctx.outputs);
        },
        ...(input.effect === 'unsafe' && input.reconcile && input.effectUrl
          ? {
              async reconcile(ctx) {
                const res = await fetch(`${input.effectUrl}/${encodeURIComponent(ctx.idempotencyKey)}`, { signal: ctx.signal });
                const record = (await res.json()) as { applied: number };
                return record.applied > 0 ? { done: true as const, output: output(i, ctx.attempt, ctx.idempotencyKey, ctx.outputs) } : { done: false as const };
              },
            }
          : {}),
      };
    }),
});
