import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toIndexLine } from './index-record.js';
import { searchIndex } from './search-index.js';

const HASH = 'a'.repeat(64);
let dir: string;
let indexPath: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'search-index-'));
  indexPath = join(dir, 'index.jsonl');
  const long = `${'x'.repeat(300)} Needle ${'y'.repeat(300)}`;
  await writeFile(
    indexPath,
    [
      toIndexLine({ path: 'README.md', size: 10, sha256: HASH, mtimeMs: 1, text: '# Title\nfind the NEEDLE here\nand a needle again\n' }),
      toIndexLine({ path: 'logo.png', size: 10, sha256: HASH, mtimeMs: 1 }),
      'not json\n',
      toIndexLine({ path: 'src/needle.ts', size: 10, sha256: HASH, mtimeMs: 1, text: long }),
    ].join(''),
  );
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('searchIndex', () => {
  it('finds case-insensitive matches in text and paths, with 1-based lines', async () => {
    const matches = await searchIndex(indexPath, 'needle');
    expect(matches.map((m) => [m.path, m.line])).toEqual([
      ['README.md', 2],
      ['README.md', 3],
      ['src/needle.ts', 0],
      ['src/needle.ts', 1],
    ]);
    expect(matches[0]?.snippet).toBe('find the NEEDLE here');
    expect(matches[3]?.snippet).toMatch(/^…x+ Needle y+…$/);
    expect(matches[3]?.snippet.length).toBeLessThanOrEqual(202);
  });

  it('stops at the limit and finds nothing for an empty or absent query', async () => {
    expect(await searchIndex(indexPath, 'needle', 1)).toHaveLength(1);
    expect(await searchIndex(indexPath, '')).toEqual([]);
    expect(await searchIndex(indexPath, 'no such words')).toEqual([]);
  });
});
