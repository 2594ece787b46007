import { StepwiseError } from './stepwise-error.js';

/** A step ran past its `timeoutMs`; its AbortSignal was fired. */
export class StepTimeoutError extends StepwiseError {
  constructor(step: string, timeoutMs: number) {
    super('step_timeout', 'timeout', `Step "${step}" did not finish within ${timeoutMs} ms.`, { details: { step, timeoutMs } });
  }
}
