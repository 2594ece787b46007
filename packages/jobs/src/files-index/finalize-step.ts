import { randomBytes } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InternalError } from '@stepwise/shared';
import type { StepDefinition } from '@stepwise/shared';
import type { FilesIndexInput, FilesIndexResult } from './schemas.js';
import { FilesIndexResultSchema, IndexOutputSchema, ScanOutputSchema } from './schemas.js';
import { summarizeIndex } from './summarize-index.js';

/** The manifest's name, next to the index. */
export const MANIFEST_FILE = 'manifest.json';

/** Identifies the manifest and index layout, for readers that outlive this version. */
export const MANIFEST_FORMAT = 'stepwise.files-index/1';

/**
 * Step 3: checks and totals the index, then writes `manifest.json` beside it (atomically, so a
 * retry simply replaces it). Its output is the job result.
 * @throws InternalError when the index is not the length the index step finished with
 */
export const finalizeStep: StepDefinition<FilesIndexInput, FilesIndexResult> = {
  name: 'finalize',
  effect: 'none',
  output: FilesIndexResultSchema,
  async run(ctx) {
    const scan = ScanOutputSchema.parse(ctx.outputs['scan']);
    const index = IndexOutputSchema.parse(ctx.outputs['index']);
    ctx.progress(0, 1, 'checking the index');
    const summary = await summarizeIndex(index.indexPath, ctx.signal);
    if (summary.indexBytes !== index.bytesWritten) {
      throw new InternalError(`index ${index.indexPath} is ${summary.indexBytes} bytes, but indexing finished at ${index.bytesWritten}`);
    }
    const manifestPath = join(dirname(index.indexPath), MANIFEST_FILE);
    const manifest = {
      format: MANIFEST_FORMAT,
      jobId: ctx.jobId,
      root: ctx.input.root,
      include: ctx.input.include ?? null,
      exclude: ctx.input.exclude,
      maxFileBytes: ctx.input.maxFileBytes,
      files: summary.files,
      textFiles: summary.textFiles,
      bytes: summary.bytes,
      // Listed by the scan but gone or unreadable by the time they were indexed.
      vanished: index.scanned - summary.files,
      skippedByScan: scan.skipped,
      folders: scan.folderCount,
      indexPath: index.indexPath,
      indexBytes: summary.indexBytes,
      sha256: summary.sha256,
      createdAt: new Date().toISOString(),
    };
    const tmp = `${manifestPath}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
    await rename(tmp, manifestPath);
    const n = summary.files.toLocaleString('en-US');
    ctx.progress(1, 1, `indexed ${n} files (${summary.textFiles.toLocaleString('en-US')} with text)`);
    return {
      indexPath: index.indexPath,
      manifestPath,
      files: summary.files,
      textFiles: summary.textFiles,
      bytes: summary.bytes,
      sha256: summary.sha256,
    };
  },
};
