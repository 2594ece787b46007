import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { IndexRecord } from './index-record.js';
import { isTextFile } from './is-text-file.js';
import { throwIfAborted } from './throw-if-aborted.js';

export interface DescribeFileOptions {
  /** Files larger than this are hashed, but their text is not kept. */
  maxFileBytes: number;
  /** Checked between chunks, so hashing a huge file stops promptly on cancellation. */
  signal: AbortSignal;
}

const CHUNK = 1024 * 1024;

// Errors that mean the file changed under us since the scan (gone, now a folder or a link,
// permissions tightened). The file is left out of the index; the walk goes on.
const SKIPPABLE = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'ELOOP', 'ENXIO']);

// No following links (the scan skipped them; one appearing since must not lead outside the root),
// and no blocking open if a FIFO took the file's place. Both flags are 0 where the OS lacks them.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

function errorCode(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Hashes one file and, for a text file no larger than `maxFileBytes`, extracts its UTF-8 text
 * (invalid sequences become U+FFFD). Reads the file once, in chunks.
 * @returns the record, or null when the file vanished or can no longer be read as a regular file
 * @throws the signal's reason when aborted; unexpected I/O errors
 */
export async function describeFile(absPath: string, relPath: string, options: DescribeFileOptions): Promise<IndexRecord | null> {
  let fh: FileHandle;
  try {
    fh = await open(absPath, OPEN_FLAGS);
  } catch (e: unknown) {
    if (SKIPPABLE.has(errorCode(e) ?? '')) return null;
    throw e;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return null;
    const hash = createHash('sha256');
    // Sized to the file so small files do not each allocate a full chunk; a file that grew
    // since the stat is still read to its end.
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(4096, st.size + 1)));
    let kept: Buffer[] | undefined = [];
    let size = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      hash.update(chunk);
      size += bytesRead;
      if (kept && size <= options.maxFileBytes) kept.push(Buffer.from(chunk));
      else kept = undefined;
      throwIfAborted(options.signal);
    }
    const record: IndexRecord = { path: relPath, size, sha256: hash.digest('hex'), mtimeMs: st.mtimeMs };
    if (kept) {
      const content = Buffer.concat(kept);
      if (isTextFile(relPath, content)) record.text = new TextDecoder('utf-8').decode(content);
    }
    return record;
  } catch (e: unknown) {
    if (SKIPPABLE.has(errorCode(e) ?? '')) return null;
    throw e;
  } finally {
    await fh.close();
  }
}
