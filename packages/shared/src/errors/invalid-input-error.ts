import { StepwiseError } from './stepwise-error.js';

export interface InputIssue {
  path: string;
  message: string;
}

/** The caller's input cannot be accepted as sent; retrying unchanged will fail the same way. */
export class InvalidInputError extends StepwiseError {
  readonly issues: readonly InputIssue[];

  constructor(message: string, issues: readonly InputIssue[] = [], code = 'invalid_input') {
    super(code, 'invalid_input', message, issues.length > 0 ? { details: { issues } } : {});
    this.issues = issues;
  }

  /** Build from zod issues, prefixing each path with where the value came from (e.g. `input`). */
  static fromZod(
    what: string,
    issues: readonly { path: readonly PropertyKey[]; message: string }[],
    prefix: readonly PropertyKey[] = [],
  ): InvalidInputError {
    const mapped = issues.slice(0, 20).map((i) => ({
      path: [...prefix, ...i.path].map(String).join('.') || '(root)',
      message: i.message,
    }));
    const first = mapped[0];
    const summary = first ? `${first.path}: ${first.message}` : 'invalid value';
    return new InvalidInputError(`Invalid ${what}: ${summary}${mapped.length > 1 ? ` (and ${mapped.length - 1} more)` : ''}.`, mapped);
  }
}
