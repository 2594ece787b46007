import { sql } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';

/**
 * A `text[]` parameter. Drizzle expands a bare JS array into a `($1, $2)` list, which is right
 * for `in` but wrong for an array column; `null` stays SQL NULL.
 */
export function textArray(values: readonly string[] | null): SQL {
  if (values === null) return sql`null::text[]`;
  return sql`array[${sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  )}]::text[]`;
}
