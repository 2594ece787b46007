import type { RetryPolicyInput, StepEffect } from '@stepwise/shared';
import type { HttpRequestInput } from './schemas.js';

/** How the `request` step declares itself to the runner; a pure function of the input. */
export interface RequestPolicy {
  effect: StepEffect;
  approval: 'required' | 'none';
  /** Whether the step gets a reconcile() (statusUrl given and the step is unsafe). */
  reconcile: boolean;
  /** A step-level retry override, when the default policy would be unsafe. */
  retry: RetryPolicyInput | undefined;
}

/**
 * GET and HEAD are safe by HTTP semantics (effect `none`). A write is `idempotent` only when the
 * caller says the endpoint honours Idempotency-Key; otherwise it is `unsafe`: it needs approval,
 * may reconcile through statusUrl, and is never retried automatically. The runner retries a failed
 * step by running it again, and a 5xx, timeout or reset after a write cannot tell whether the
 * write happened, so a retry could apply it twice.
 */
export function requestPolicy(input: Pick<HttpRequestInput, 'method' | 'honoursIdempotencyKey' | 'statusUrl'>): RequestPolicy {
  if (input.method === 'GET' || input.method === 'HEAD') return { effect: 'none', approval: 'none', reconcile: false, retry: undefined };
  if (input.honoursIdempotencyKey) return { effect: 'idempotent', approval: 'none', reconcile: false, retry: undefined };
  return { effect: 'unsafe', approval: 'required', reconcile: input.statusUrl !== undefined, retry: { maxAttempts: 1 } };
}
