import { z } from 'zod';
import type { ErrorInfo } from '../errors/stepwise-error.js';

export const RetryPolicySchema = z.object({
  /** Total attempts including the first; 1 means never retry. */
  maxAttempts: z.number().int().min(1).max(100).default(3),
  /** Backoff ceiling for attempt 1, in ms. */
  baseDelayMs: z.number().int().min(0).default(1000),
  /** No delay exceeds this, in ms (a server's Retry-After is honoured up to it too). */
  maxDelayMs: z.number().int().min(0).default(60_000),
  factor: z.number().min(1).default(2),
});
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;
export type RetryPolicyInput = z.input<typeof RetryPolicySchema>;

export const DEFAULT_RETRY_POLICY: RetryPolicy = RetryPolicySchema.parse({});

/** Later layers win: defaults ← job type ← step. */
export function mergeRetryPolicy(...layers: (RetryPolicyInput | undefined)[]): RetryPolicy {
  // An explicit `undefined` in a layer means "not set here", never "reset to the default".
  const defined = layers.map((l) => Object.fromEntries(Object.entries(l ?? {}).filter(([, v]) => v !== undefined)));
  return RetryPolicySchema.parse(Object.assign({}, ...defined));
}

export type RetryDecision =
  | { kind: 'retry'; delayMs: number }
  | { kind: 'wait'; reason: 'needs_reauthorization' }
  | { kind: 'fail' }
  | { kind: 'cancel' };

/** Exponential backoff with full jitter (AWS): uniform in [0, min(cap, base·factor^(attempt-1))]. */
export function backoffDelayMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.factor ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * What to do after attempt number `attempt` (1-based) failed with `error`. Pure: the caller
 * supplies `random`, so tests can pin the jitter.
 */
export function decideRetry(
  error: Pick<ErrorInfo, 'category' | 'retryable' | 'retryAfterMs'>,
  attempt: number,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  random: () => number = Math.random,
): RetryDecision {
  switch (error.category) {
    case 'cancelled':
      return { kind: 'cancel' };
    case 'unauthorized':
      // A person must refresh the credential; retrying on a timer would only fail again.
      return { kind: 'wait', reason: 'needs_reauthorization' };
    case 'invalid_input':
    case 'forbidden':
    case 'not_found':
    case 'conflict':
    case 'internal':
      return { kind: 'fail' };
    case 'transient':
    case 'rate_limited':
    case 'timeout': {
      if (!error.retryable || attempt >= policy.maxAttempts) return { kind: 'fail' };
      const delayMs =
        error.retryAfterMs !== undefined
          ? Math.min(policy.maxDelayMs, error.retryAfterMs)
          : backoffDelayMs(attempt, policy, random);
      return { kind: 'retry', delayMs };
    }
  }
}
