import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { InternalError } from '@stepwise/shared';
import { IndexRecordSchema } from './index-record.js';
import { throwIfAborted } from './throw-if-aborted.js';

export interface IndexSummary {
  /** Lines, one per indexed file. */
  files: number;
  /** Lines that carry `text`. */
  textFiles: number;
  /** Sum of the files' sizes. */
  bytes: number;
  /** Length of the index file. */
  indexBytes: number;
  /** SHA-256 of the index file, lower-case hex. */
  sha256: string;
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Reads a JSONL index once: hashes its bytes and totals its records.
 * @throws InternalError on a line that is not a valid record; the signal's reason when aborted
 */
export async function summarizeIndex(indexPath: string, signal: AbortSignal): Promise<IndexSummary> {
  const hash = createHash('sha256');
  const stream = createReadStream(indexPath);
  let indexBytes = 0;
  stream.on('data', (chunk) => {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    hash.update(buf);
    indexBytes += buf.length;
  });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  const summary = { files: 0, textFiles: 0, bytes: 0 };
  try {
    for await (const line of lines) {
      if (line === '') continue;
      if (summary.files % 1000 === 0) throwIfAborted(signal);
      const parsed = IndexRecordSchema.safeParse(parseJson(line));
      if (!parsed.success) throw new InternalError(`index ${indexPath} line ${summary.files + 1} is not a valid record`);
      summary.files++;
      summary.bytes += parsed.data.size;
      if (parsed.data.text !== undefined) summary.textFiles++;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return { ...summary, indexBytes, sha256: hash.digest('hex') };
}
