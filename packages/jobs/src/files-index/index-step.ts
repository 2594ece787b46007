import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { BlobRefSchema, InternalError } from '@stepwise/shared';
import type { BlobStore, StepDefinition } from '@stepwise/shared';
import { describeFile } from './describe-file.js';
import type { IndexRecord } from './index-record.js';
import { IndexWriter } from './index-writer.js';
import { outputKey } from './scan-step.js';
import type { FilesIndexInput, IndexCursor, IndexOutput, ScanOutput, ScannedFile } from './schemas.js';
import { IndexCursorSchema, IndexOutputSchema, ScannedFileSchema, ScanOutputSchema } from './schemas.js';
import { throwIfAborted } from './throw-if-aborted.js';

/** The index file's name inside the job's output folder. */
export const INDEX_FILE = 'index.jsonl';

/** A cursor is saved after this many files or this many milliseconds, whichever comes first. */
export const CURSOR_EVERY_FILES = 200;
export const CURSOR_EVERY_MS = 1000;

/** Files read concurrently ahead of the one being written. */
const READ_AHEAD = 8;

async function loadFileList(scan: ScanOutput, blobs: BlobStore): Promise<ScannedFile[]> {
  const ref = BlobRefSchema.safeParse(scan.files);
  if (!ref.success) return z.array(ScannedFileSchema).parse(scan.files);
  const data = await blobs.get(ref.data);
  // The position-based cursor is only meaningful against exactly the list it was saved with.
  if (createHash('sha256').update(data).digest('hex') !== ref.data.$blob.sha256) {
    throw new InternalError(`the file list of this job (${ref.data.$blob.uri}) does not match its checksum`);
  }
  return z.array(ScannedFileSchema).parse(JSON.parse(data.toString('utf8')));
}

/** Where to start: from the cursor when it fits the list and the file on disk, else from scratch. */
async function resumePoint(cursor: unknown, total: number, indexPath: string): Promise<IndexCursor | undefined> {
  const parsed = IndexCursorSchema.safeParse(cursor);
  if (!parsed.success || parsed.data.nextIndex > total) return undefined;
  const size = await IndexWriter.sizeOf(indexPath);
  return size !== undefined && size >= parsed.data.bytesWritten ? parsed.data : undefined;
}

/**
 * Step 2: hashes every listed file and writes the JSONL index, saving a cursor every
 * {@link CURSOR_EVERY_FILES} files or {@link CURSOR_EVERY_MS} ms. A resumed attempt cuts the
 * index back to the cursor's length and goes on from its position, so no line is duplicated.
 * Effect `none`: it only writes its own output folder, and rewriting it gives the same bytes.
 * @throws the signal's reason when aborted (checked before every file)
 */
export const indexStep: StepDefinition<FilesIndexInput, IndexOutput> = {
  name: 'index',
  effect: 'none',
  output: IndexOutputSchema,
  async run(ctx) {
    const scan = ScanOutputSchema.parse(ctx.outputs['scan']);
    const files = await loadFileList(scan, ctx.blobs);
    const total = files.length;
    const indexPath = join(await ctx.blobs.dirFor(outputKey(ctx.jobId)), INDEX_FILE);

    const resume = await resumePoint(ctx.cursor, total, indexPath);
    if (ctx.cursor !== undefined && !resume) ctx.log.warn({ cursor: ctx.cursor }, 'cursor did not fit the index; restarted indexing');
    if (resume) ctx.log.info({ nextIndex: resume.nextIndex, bytesWritten: resume.bytesWritten }, 'resumed indexing');

    const writer = await IndexWriter.open(indexPath, resume?.bytesWritten ?? 0);
    try {
      let lastSaveAt = Date.now();
      let sinceSave = 0;
      let vanished = 0;
      // Files are read a few ahead, to overlap disk latency, and written strictly in list order.
      const ahead = new Map<number, Promise<IndexRecord | null>>();
      const readAhead = (from: number): void => {
        for (let j = from; j < Math.min(total, from + READ_AHEAD); j++) {
          const f = files[j];
          if (!f || ahead.has(j)) continue;
          const p = describeFile(join(ctx.input.root, f.path), f.path, { maxFileBytes: ctx.input.maxFileBytes, signal: ctx.signal });
          // Reads still in flight when the loop throws settle on their own; their errors are not ours any more.
          p.catch(() => undefined);
          ahead.set(j, p);
        }
      };
      for (let i = resume?.nextIndex ?? 0; i < total; i++) {
        throwIfAborted(ctx.signal);
        const file = files[i];
        if (!file) break;
        readAhead(i);
        const record = await ahead.get(i);
        ahead.delete(i);
        // Checked again after the wait: once aborted (maybe for a lost lease) nothing more may be written.
        throwIfAborted(ctx.signal);
        if (record) await writer.append(record);
        else vanished++;
        const done = i + 1;
        ctx.progress(done, total, `indexed ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}: ${file.path}`);
        sinceSave++;
        if (sinceSave >= CURSOR_EVERY_FILES || Date.now() - lastSaveAt >= CURSOR_EVERY_MS) {
          if (ctx.signal.aborted) continue; // the loop throws next
          // Flush first: the cursor must never point past bytes that are on disk.
          const bytesWritten = await writer.flush();
          await ctx.saveCursor({ nextIndex: done, bytesWritten } satisfies IndexCursor);
          sinceSave = 0;
          lastSaveAt = Date.now();
        }
      }
      throwIfAborted(ctx.signal);
      const bytesWritten = await writer.flush();
      // A crash between here and the checkpoint then costs a re-check, not a re-index.
      await ctx.saveCursor({ nextIndex: total, bytesWritten } satisfies IndexCursor);
      if (vanished > 0) ctx.log.warn({ vanished }, 'files vanished or became unreadable after the scan');
      return { indexPath, bytesWritten, scanned: total };
    } finally {
      await writer.close();
    }
  },
};
