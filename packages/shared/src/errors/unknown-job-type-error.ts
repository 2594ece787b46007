import { StepwiseError } from './stepwise-error.js';

export class UnknownJobTypeError extends StepwiseError {
  constructor(type: string, known: readonly string[]) {
    super('unknown_job_type', 'invalid_input', `There is no job type "${type}". Known types: ${known.join(', ')}. Call list_job_types for their inputs.`, {
      details: { type, known },
    });
  }
}
