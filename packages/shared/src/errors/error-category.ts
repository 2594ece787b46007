import { z } from 'zod';

/** DESIGN §6. What kind of failure this is decides what happens next and what the caller should do. */
export const ERROR_CATEGORIES = [
  'transient',
  'rate_limited',
  'timeout',
  'invalid_input',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'cancelled',
  'internal',
] as const;
export type ErrorCategory = (typeof ERROR_CATEGORIES)[number];
export const ErrorCategorySchema = z.enum(ERROR_CATEGORIES);

/** Whether trying the same thing again, unchanged, can succeed. */
export function isRetryableCategory(category: ErrorCategory): boolean {
  switch (category) {
    case 'transient':
    case 'rate_limited':
    case 'timeout':
      return true;
    case 'invalid_input':
    case 'unauthorized':
    case 'forbidden':
    case 'not_found':
    case 'conflict':
    case 'cancelled':
    case 'internal':
      return false;
  }
}
