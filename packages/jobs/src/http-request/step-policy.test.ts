import { describe, expect, it } from 'vitest';
import type { StepDefinition } from '@stepwise/shared';
import { httpRequest } from './http-request.js';
import { HttpRequestInputSchema } from './schemas.js';

const STATUS_URL = 'https://api.example.com/status';

function planned(raw: Record<string, unknown>): StepDefinition<unknown> {
  const steps = httpRequest.plan(HttpRequestInputSchema.parse({ url: 'https://api.example.com/x', ...raw }));
  expect(steps.map((s) => s.name)).toEqual(['request']);
  return steps[0] as StepDefinition<unknown>;
}

describe('http.request plan(input)', () => {
  const cases: [method: string, honours: boolean, statusUrl: boolean, effect: string, approval: string, reconcile: boolean][] = [];
  for (const method of ['GET', 'HEAD']) for (const honours of [false, true]) for (const s of [false, true]) cases.push([method, honours, s, 'none', 'none', false]);
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    for (const s of [false, true]) cases.push([method, true, s, 'idempotent', 'none', false]);
    cases.push([method, false, false, 'unsafe', 'required', false]);
    cases.push([method, false, true, 'unsafe', 'required', true]);
  }

  it.each(cases)('%s honours=%s statusUrl=%s → %s, approval %s, reconcile %s', (method, honours, withStatus, effect, approval, reconcile) => {
    const step = planned({ method, honoursIdempotencyKey: honours, ...(withStatus ? { statusUrl: STATUS_URL } : {}) });
    expect(step.effect).toBe(effect);
    expect(step.approval).toBe(approval);
    expect(typeof step.reconcile === 'function').toBe(reconcile);
    // Unsafe writes never retry on their own: a retry re-runs the step, which could apply the write twice.
    expect(step.retry).toEqual(effect === 'unsafe' ? { maxAttempts: 1 } : undefined);
    expect(typeof step.describeApproval === 'function').toBe(approval === 'required');
  });

  it('uses the input timeout as the step timeout', () => {
    expect(planned({}).timeoutMs).toBe(30_000);
    expect(planned({ timeoutMs: 1234 }).timeoutMs).toBe(1234);
  });

  it('always plans the same single step name, so a job resumes under any input', () => {
    expect(planned({ method: 'POST' }).name).toBe(planned({ method: 'GET' }).name);
  });
});
