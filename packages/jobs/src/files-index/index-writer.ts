import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, open, rename, rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { InternalError } from '@stepwise/shared';
import type { IndexRecord } from './index-record.js';
import { toIndexLine } from './index-record.js';

// Lines are batched in memory and written when this much is pending, or on flush().
const WRITE_BATCH_BYTES = 1024 * 1024;

/**
 * Appends index records to a JSONL file and tells how many bytes are durable, which is what
 * a resume cursor records. Each open starts a fresh inode (a copy cut to the kept length, then
 * renamed over the path), so a stalled earlier attempt still holding the old file cannot write
 * into the one this attempt builds.
 */
export class IndexWriter {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #position: number;

  private constructor(
    private readonly fh: FileHandle,
    start: number,
  ) {
    this.#position = start;
  }

  /** The current length of `path`, or undefined when it does not exist. */
  static async sizeOf(path: string): Promise<number | undefined> {
    try {
      return (await stat(path)).size;
    } catch (e: unknown) {
      if (typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  /**
   * Opens the index at `path` keeping its first `keepBytes` bytes (0 starts it empty).
   * @throws InternalError when the file is shorter than `keepBytes`
   */
  static async open(path: string, keepBytes: number): Promise<IndexWriter> {
    const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
    let fh: FileHandle | undefined;
    try {
      if (keepBytes > 0) {
        const size = await IndexWriter.sizeOf(path);
        if (size === undefined || size < keepBytes) {
          throw new InternalError(`index ${path} holds ${size ?? 0} bytes, fewer than the ${keepBytes} the cursor recorded`);
        }
        // A reflink where the filesystem supports it, so resuming a large index is cheap.
        await copyFile(path, tmp, constants.COPYFILE_FICLONE);
        fh = await open(tmp, 'r+');
        await fh.truncate(keepBytes);
      } else {
        fh = await open(tmp, 'w+');
      }
      await fh.sync();
      await rename(tmp, path);
      return new IndexWriter(fh, keepBytes);
    } catch (e: unknown) {
      await fh?.close();
      await rm(tmp, { force: true });
      throw e;
    }
  }

  /** Bytes written so far, pending lines not included; durable once `flush()` has returned. */
  get bytesWritten(): number {
    return this.#position;
  }

  /** Queues one record; it reaches the file by the next flush at the latest. */
  async append(record: IndexRecord): Promise<void> {
    const line = Buffer.from(toIndexLine(record), 'utf8');
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (this.#pendingBytes >= WRITE_BATCH_BYTES) await this.#writePending();
  }

  /**
   * Writes pending lines and fsyncs, so a cursor saved afterwards never points past durable data.
   * @returns the file's length in bytes, always at a line boundary
   */
  async flush(): Promise<number> {
    await this.#writePending();
    await this.fh.sync();
    return this.#position;
  }

  /** Closes the file without writing pending lines (after an abort they must not land). */
  async close(): Promise<void> {
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.fh.close();
  }

  async #writePending(): Promise<void> {
    if (this.#pendingBytes === 0) return;
    const data = Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    let offset = 0;
    while (offset < data.length) {
      const { bytesWritten } = await this.fh.write(data, offset, data.length - offset, this.#position);
      offset += bytesWritten;
      this.#position += bytesWritten;
    }
  }
}
