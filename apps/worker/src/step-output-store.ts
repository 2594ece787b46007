import { z } from 'zod';
import type { BlobStore } from '@stepwise/shared';
import { BlobRefSchema, canonicalJson, sha256Hex } from '@stepwise/shared';

/** Outputs above this many bytes of JSON go to the blob store; the checkpoint keeps a reference. */
export const INLINE_OUTPUT_LIMIT = 256 * 1024;

const SpilledSchema = z.object({ $stepOutput: BlobRefSchema });

/**
 * Stores a step output for its checkpoint: inline when small, spilled to the blob store when
 * large (DESIGN §2). `load` reverses it on resume, so later steps always see the real value.
 */
export class StepOutputStore {
  constructor(private readonly blobs: BlobStore) {}

  async save(jobId: string, step: string, output: unknown): Promise<{ stored: unknown; sha256: string }> {
    const json = canonicalJson(output ?? null);
    const sha256 = sha256Hex(json);
    if (json.length <= INLINE_OUTPUT_LIMIT) return { stored: output ?? null, sha256 };
    const ref = await this.blobs.put(`step-outputs/${jobId}/${step}.json`, json, 'application/json');
    return { stored: { $stepOutput: ref }, sha256 };
  }

  async load(stored: unknown): Promise<unknown> {
    const spilled = SpilledSchema.safeParse(stored);
    if (!spilled.success) return stored;
    return JSON.parse((await this.blobs.get(spilled.data.$stepOutput)).toString('utf8')) as unknown;
  }
}
