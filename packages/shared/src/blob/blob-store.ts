import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** What a checkpoint keeps for an output too big to inline. */
export const BlobRefSchema = z.object({
  $blob: z.object({ uri: z.string(), sha256: z.string(), bytes: z.number().int(), contentType: z.string() }),
});
export type BlobRef = z.infer<typeof BlobRefSchema>;

export interface BlobStore {
  /** Atomically stores `data` and returns its reference. */
  put(key: string, data: string | Uint8Array, contentType: string): Promise<BlobRef>;
  get(ref: BlobRef): Promise<Buffer>;
  /** A directory a job may write large files into (e.g. an index), inside the store. */
  dirFor(key: string): Promise<string>;
}

/** The default blob store: a directory on local or shared disk. */
export class FsBlobStore implements BlobStore {
  constructor(readonly root: string) {}

  async dirFor(key: string): Promise<string> {
    const dir = join(this.root, safe(key));
    await mkdir(dir, { recursive: true });
    return dir;
  }

  async put(key: string, data: string | Uint8Array, contentType: string): Promise<BlobRef> {
    const buf = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data);
    const path = join(this.root, safe(key));
    await mkdir(join(path, '..'), { recursive: true });
    // Write then rename: a crash mid-write never leaves a truncated blob under the final name.
    const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, buf);
    await rename(tmp, path);
    return {
      $blob: { uri: `file://${path}`, sha256: createHash('sha256').update(buf).digest('hex'), bytes: buf.length, contentType },
    };
  }

  async get(ref: BlobRef): Promise<Buffer> {
    return readFile(new URL(ref.$blob.uri));
  }
}

function safe(key: string): string {
  return key
    .split('/')
    .map((p) => p.replace(/[^a-zA-Z0-9._-]/g, '_'))
    .filter((p) => p && p !== '.' && p !== '..')
    .join('/');
}
