import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface FixtureTree {
  root: string;
  /** Every file written, by relative path, excluded ones included. */
  contents: ReadonlyMap<string, Buffer>;
  remove(): Promise<void>;
}

/** A needle only `src/lib/needle.ts` contains, for search tests. */
export const NEEDLE = 'Zebra-Crossing-42';

/**
 * A small real tree: nested folders, text without an extension, binaries, a large file,
 * excluded folders (node_modules, .git), a symlink, and `bulk` extra files in `many/`.
 */
export async function createFixtureTree(options: { bulk?: number; largeBytes?: number } = {}): Promise<FixtureTree> {
  const root = await mkdtemp(join(tmpdir(), 'files-index-'));
  const contents = new Map<string, Buffer>();
  const put = async (rel: string, data: string | Buffer): Promise<void> => {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), buf);
    contents.set(rel, buf);
  };
  await put('README.md', '# Fixture\n\nThe quick brown fox jumps over the lazy dog.\n');
  await put('src/index.ts', "export const answer = 42;\nexport * from './lib/needle.js';\n");
  await put('src/lib/needle.ts', `// hidden in here\nexport const needle = '${NEEDLE}';\n`);
  await put('src/lib/deep/er/still.json', '{ "deep": true, "emoji": "héllo ✓" }\n');
  await put('bin/run', '#!/bin/sh\necho "running"\n');
  await put('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48]));
  await put('assets/blob.dat', Buffer.concat([Buffer.from('looks like text but '), Buffer.from([0, 1, 2, 3])]));
  await put('empty.txt', '');
  await put('large.log', Buffer.alloc(options.largeBytes ?? 300 * 1024, 'a'));
  await put('node_modules/pkg/index.js', `module.exports = '${NEEDLE}';\n`);
  await put('.git/HEAD', 'ref: refs/heads/main\n');
  await put('src/dist/out.js', 'console.log(1);\n');
  const bulk = Array.from({ length: options.bulk ?? 0 }, (_, i) => i);
  if (bulk.length > 0) await mkdir(join(root, 'many'));
  for (let i = 0; i < bulk.length; i += 64) {
    await Promise.all(
      bulk.slice(i, i + 64).map(async (n) => {
        const rel = `many/file-${String(n).padStart(4, '0')}.txt`;
        const buf = Buffer.from(`bulk file ${n}\n`);
        await writeFile(join(root, rel), buf);
        contents.set(rel, buf);
      }),
    );
  }
  await symlink(join(root, 'README.md'), join(root, 'link-to-readme.md'));
  return { root, contents, remove: () => rm(root, { recursive: true, force: true }) };
}
