import { CancelledError } from '@stepwise/shared';

/**
 * Throws the signal's reason when it has fired. The runner aborts with a typed reason
 * (CancelledError, StepTimeoutError, LeaseLostError, a shutdown), and that reason is what it
 * needs back to decide what happens next; a bare or non-Error reason becomes a CancelledError.
 * @throws the signal's reason, or CancelledError
 */
export function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') throw reason;
  throw new CancelledError();
}
