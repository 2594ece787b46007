import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { BlobRefSchema } from '@stepwise/shared';
import { DEFAULT_EXCLUDE } from './path-patterns.js';

/** Default `maxFileBytes`: 1 MiB. */
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** Input of `files.index`. Strict, so a misspelt field is an error rather than silently ignored. */
export const FilesIndexInputSchema = z.strictObject({
  root: z
    .string()
    .min(1)
    .refine((p) => isAbsolute(p), { message: 'root must be an absolute path (e.g. "/home/me/project"), not a relative one' })
    .describe('Absolute path of the directory to index, e.g. "/home/me/project". Relative paths are rejected.'),
  include: z
    .array(z.string().min(1).max(200))
    .max(100)
    .optional()
    .describe(
      'Only index files matching one of these patterns; omit to index every file. A pattern is an extension ' +
        '("ts" or ".md"), a file name ("Dockerfile") or a glob ("*.test.ts", "src/**/*.js"; "*" stays within one ' +
        'folder, "**" crosses folders). A pattern without "/" matches the file name anywhere; matching ignores case.',
    ),
  exclude: z
    .array(z.string().min(1).max(200))
    .max(100)
    .default([...DEFAULT_EXCLUDE])
    .describe(
      `Folder or file names to skip wherever they appear; globs ("*.lock") and root-relative paths ("docs/old") work too. ` +
        `Default: ${DEFAULT_EXCLUDE.join(', ')}. Giving a list replaces the default, so repeat those names to keep skipping them.`,
    ),
  maxFileBytes: z
    .number()
    .int()
    .positive()
    .max(64 * 1024 * 1024)
    .default(DEFAULT_MAX_FILE_BYTES)
    .describe('Files larger than this many bytes are still listed and hashed, but their text is not extracted. Default 1048576 (1 MiB).'),
  followSymlinks: z
    .literal(false)
    .default(false)
    .describe('Symbolic links are never followed and are left out of the index; only false is accepted.'),
});
export type FilesIndexInput = z.output<typeof FilesIndexInputSchema>;

/** One entry of the scan's file list. */
export const ScannedFileSchema = z.object({
  /** Relative to the root, `/`-separated. */
  path: z.string(),
  size: z.number().int().nonnegative(),
});
export type ScannedFile = z.infer<typeof ScannedFileSchema>;

/** Output of `scan`: the file list inline, or in the blob store when it is long. */
export const ScanOutputSchema = z.object({
  root: z.string(),
  files: z.union([z.array(ScannedFileSchema), BlobRefSchema]),
  fileCount: z.number().int().nonnegative(),
  folderCount: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
});
export type ScanOutput = z.infer<typeof ScanOutputSchema>;

/** What `index` saves to resume: the next file's position in the scan list, and the index length to keep. */
export const IndexCursorSchema = z.object({
  nextIndex: z.number().int().nonnegative(),
  bytesWritten: z.number().int().nonnegative(),
});
export type IndexCursor = z.infer<typeof IndexCursorSchema>;

/** Output of `index`. */
export const IndexOutputSchema = z.object({
  indexPath: z.string(),
  /** Length of the finished index file. */
  bytesWritten: z.number().int().nonnegative(),
  /** Files in the scan list; those that vanished since the scan have no line. */
  scanned: z.number().int().nonnegative(),
});
export type IndexOutput = z.infer<typeof IndexOutputSchema>;

/** The job result. */
export const FilesIndexResultSchema = z.object({
  indexPath: z.string().describe('Absolute path of the JSONL index: one line {path, size, sha256, mtimeMs, text?} per file.'),
  manifestPath: z.string().describe('Absolute path of manifest.json: root, counts, index sha256, createdAt.'),
  files: z.number().int().nonnegative().describe('Files in the index.'),
  textFiles: z.number().int().nonnegative().describe('Files whose text was extracted.'),
  bytes: z.number().int().nonnegative().describe('Total size of the indexed files in bytes.'),
  sha256: z.string().describe('SHA-256 of the index file, to check it was not changed.'),
});
export type FilesIndexResult = z.infer<typeof FilesIndexResultSchema>;
