import { sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import type { JobStatus } from '../job/status.js';
import { JOB_STATUSES } from '../job/status.js';

/** `('a','b')` for a status guard. Values come from our own constants, checked here anyway. */
export function statusIn(statuses: readonly JobStatus[]): SQL {
  for (const s of statuses) if (!JOB_STATUSES.includes(s)) throw new Error(`unknown status ${s}`);
  return sql.raw(`(${statuses.map((s) => `'${s}'`).join(', ')})`);
}

/** A JSON value as a jsonb parameter (`null` stays SQL NULL). */
export function jsonb(value: unknown): SQL {
  return value === undefined || value === null ? sql`null::jsonb` : sql`${JSON.stringify(value)}::jsonb`;
}

export function rowsOf(result: unknown): Record<string, unknown>[] {
  return result as Record<string, unknown>[];
}
