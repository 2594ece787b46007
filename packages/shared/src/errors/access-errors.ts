import { StepwiseError } from './stepwise-error.js';

/** No valid credential was presented, or it expired or was revoked. */
export class UnauthorizedError extends StepwiseError {
  constructor(message = 'Authentication is required: send a valid API key as a Bearer token.') {
    super('unauthorized', 'unauthorized', message);
  }
}

/** The caller is known but lacks a scope this call needs. */
export class ForbiddenError extends StepwiseError {
  constructor(scope: string) {
    super('forbidden', 'forbidden', `This call needs the "${scope}" scope, which the caller does not have. Ask an operator to grant it.`, {
      details: { scope },
    });
  }
}
