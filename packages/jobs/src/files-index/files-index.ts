import { defineJob } from '@stepwise/shared';
import { finalizeStep } from './finalize-step.js';
import { indexStep } from './index-step.js';
import { scanStep } from './scan-step.js';
import { FilesIndexInputSchema, FilesIndexResultSchema } from './schemas.js';

/**
 * `files.index`: walks a directory tree on the worker's disk and writes a searchable JSONL index
 * of it (path, size, sha256, mtime and, for text files, the text). Resumes from a cursor after a
 * crash or restart without duplicating lines.
 */
export const filesIndex = defineJob({
  name: 'files.index',
  title: 'Index a directory tree',
  description:
    'Walks the directory `root` on the worker machine (sorted, never following symlinks, skipping node_modules, .git, ' +
    'dist, .turbo and coverage unless `exclude` says otherwise) and builds an index of every file: its relative path, ' +
    'size, SHA-256, modification time and, for text files up to `maxFileBytes`, its UTF-8 text. Use it before ' +
    'searching, summarising or comparing a large codebase or document folder; it can take minutes on big trees and ' +
    'reports progress like "indexed 4,392/10,000: src/app.ts". Steps: scan (list files), index (hash and extract), ' +
    'finalize (write manifest). The result is {indexPath, manifestPath, files, textFiles, bytes, sha256}: indexPath ' +
    'is a JSONL file with one line {"path","size","sha256","mtimeMs","text"?} per file ("text" is absent for binary ' +
    'and oversized files), manifestPath a JSON summary beside it. To search it, read indexPath line by line and match ' +
    'on "path" or "text" (for example `grep -i` on the file, or jq \'select(.text | test("needle"; "i")) | .path\'); ' +
    'compare sha256 values to find duplicate or changed files.',
  input: FilesIndexInputSchema,
  output: FilesIndexResultSchema,
  steps: [scanStep, indexStep, finalizeStep],
});
