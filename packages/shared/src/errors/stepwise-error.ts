import { z } from 'zod';
import type { ErrorCategory } from './error-category.js';
import { ErrorCategorySchema, isRetryableCategory } from './error-category.js';

/** The wire and storage form of an error: what the assistant sees and what `jobs.error` holds. */
export const ErrorInfoSchema = z.object({
  code: z.string(),
  category: ErrorCategorySchema,
  retryable: z.boolean(),
  retryAfterMs: z.number().int().nonnegative().optional(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

export interface StepwiseErrorOptions {
  retryable?: boolean;
  /** Milliseconds the caller should wait before trying again. */
  retryAfterMs?: number;
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * Base of every error Stepwise raises on purpose. It carries the data the retry policy and the
 * assistant need to decide what to do next, so nothing downstream has to parse messages.
 */
export class StepwiseError extends Error {
  readonly code: string;
  readonly category: ErrorCategory;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, category: ErrorCategory, message: string, options: StepwiseErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.category = category;
    this.retryable = options.retryable ?? isRetryableCategory(category);
    this.retryAfterMs = options.retryAfterMs;
    this.details = options.details;
  }

  toInfo(): ErrorInfo {
    return {
      code: this.code,
      category: this.category,
      retryable: this.retryable,
      ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
      message: this.message,
      ...(this.details === undefined ? {} : { details: this.details }),
    };
  }

  static fromInfo(info: ErrorInfo): StepwiseError {
    return new StepwiseError(info.code, info.category, info.message, {
      retryable: info.retryable,
      ...(info.retryAfterMs === undefined ? {} : { retryAfterMs: info.retryAfterMs }),
      ...(info.details === undefined ? {} : { details: info.details }),
    });
  }
}

export function isStepwiseError(e: unknown): e is StepwiseError {
  return e instanceof StepwiseError;
}
