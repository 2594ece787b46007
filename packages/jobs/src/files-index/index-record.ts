import { z } from 'zod';

/** One line of the JSONL index: a file's identity, and its text when it is a text file. */
export const IndexRecordSchema = z.object({
  /** Relative to the indexed root, `/`-separated. */
  path: z.string(),
  /** Bytes hashed. */
  size: z.number().int().nonnegative(),
  /** Lower-case hex SHA-256 of the whole content. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Last modification, milliseconds since the epoch. */
  mtimeMs: z.number(),
  /** UTF-8 text; absent for binary files and for files over `maxFileBytes`. */
  text: z.string().optional(),
});
export type IndexRecord = z.infer<typeof IndexRecordSchema>;

/** The record as one JSONL line, newline included. Key order is fixed so equal files give equal bytes. */
export function toIndexLine(record: IndexRecord): string {
  const { path, size, sha256, mtimeMs, text } = record;
  return `${JSON.stringify(text === undefined ? { path, size, sha256, mtimeMs } : { path, size, sha256, mtimeMs, text })}\n`;
}
