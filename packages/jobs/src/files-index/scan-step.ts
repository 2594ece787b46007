import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InvalidInputError } from '@stepwise/shared';
import type { StepDefinition } from '@stepwise/shared';
import { excludeFilter, includeFilter } from './path-patterns.js';
import type { FilesIndexInput, ScanOutput } from './schemas.js';
import { ScanOutputSchema } from './schemas.js';
import { walkTree } from './walk-tree.js';

/** Above this many files the list goes to the blob store instead of the checkpoint. */
export const INLINE_FILE_LIMIT = 2000;

/** Where a job keeps its index, manifest and file list, as a blob store key. */
export function outputKey(jobId: string): string {
  return `files-index/${jobId}`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

async function assertDirectory(root: string): Promise<void> {
  try {
    if ((await stat(root)).isDirectory()) return;
  } catch (e: unknown) {
    const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new InvalidInputError(`root ${root} does not exist. Give the absolute path of an existing directory.`, [], 'root_not_found');
    }
    if (code === 'EACCES' || code === 'EPERM') {
      throw new InvalidInputError(`root ${root} cannot be read by the worker (permission denied).`, [], 'root_unreadable');
    }
    throw e;
  }
  throw new InvalidInputError(`root ${root} is a file, not a directory. Give the directory that contains it.`, [], 'root_not_directory');
}

/**
 * Step 1: lists the files to index, sorted, so that `index` can resume by position.
 * @throws InvalidInputError when `root` is missing or not a directory
 */
export const scanStep: StepDefinition<FilesIndexInput, ScanOutput> = {
  name: 'scan',
  effect: 'none',
  output: ScanOutputSchema,
  async run(ctx) {
    const { root, include, exclude } = ctx.input;
    await assertDirectory(root);
    // Never index our own output (or earlier indexes) when the blob store lies inside the root.
    const outDir = await ctx.blobs.dirFor(outputKey(ctx.jobId));
    const walked = await walkTree(root, {
      include: includeFilter(include),
      exclude: excludeFilter(exclude),
      skipDirs: [outDir, dirname(outDir)],
      signal: ctx.signal,
      onFolder: (s) => ctx.progress(s.fileCount, null, `scanned ${count(s.fileCount)} files in ${count(s.folderCount)} folders`),
    });
    ctx.progress(walked.fileCount, walked.fileCount, `scanned ${count(walked.fileCount)} files in ${count(walked.folderCount)} folders`);
    ctx.log.info({ files: walked.fileCount, folders: walked.folderCount, bytes: walked.bytes, skipped: walked.skipped }, 'scanned tree');
    const files =
      walked.files.length > INLINE_FILE_LIMIT
        ? await ctx.blobs.put(`${outputKey(ctx.jobId)}/scan.json`, JSON.stringify(walked.files), 'application/json')
        : walked.files;
    return { root, files, fileCount: walked.fileCount, folderCount: walked.folderCount, bytes: walked.bytes, skipped: walked.skipped };
  },
};
