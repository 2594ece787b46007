import { createHash } from 'node:crypto';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobRefSchema, CancelledError, FsBlobStore, InvalidInputError, newJobId } from '@stepwise/shared';
import type { JobId } from '@stepwise/shared';
import { filesIndex } from './files-index.js';
import { IndexRecordSchema } from './index-record.js';
import type { IndexRecord } from './index-record.js';
import type { FilesIndexInput, FilesIndexResult, ScanOutput } from './schemas.js';
import { FilesIndexInputSchema, ScanOutputSchema } from './schemas.js';
import { createFixtureTree } from './testing/fixture-tree.js';
import type { FixtureTree } from './testing/fixture-tree.js';
import { createTestStepContext } from './testing/step-context.js';
import type { TestStepContextOptions } from './testing/step-context.js';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

let blobRoot: string;
let blobs: FsBlobStore;
const trees: FixtureTree[] = [];

beforeEach(async () => {
  blobRoot = await mkdtemp(join(tmpdir(), 'files-index-blobs-'));
  blobs = new FsBlobStore(blobRoot);
});

afterEach(async () => {
  await rm(blobRoot, { recursive: true, force: true });
  await Promise.all(trees.splice(0).map((t) => t.remove()));
});

async function fixture(options: { bulk?: number } = {}): Promise<FixtureTree> {
  const tree = await createFixtureTree(options);
  trees.push(tree);
  return tree;
}

function inputFor(root: string, extra: Record<string, unknown> = {}): FilesIndexInput {
  // Large enough for every fixture file but the 300 KiB large.log.
  return FilesIndexInputSchema.parse({ root, maxFileBytes: 256 * 1024, ...extra });
}

type StepOptions = Omit<TestStepContextOptions<FilesIndexInput>, 'step' | 'blobs'>;

function step(name: string) {
  const def = filesIndex.plan({}).find((s) => s.name === name);
  if (!def) throw new Error(`no step ${name}`);
  return (options: StepOptions) => {
    const t = createTestStepContext({ ...options, step: name, blobs });
    return { ...t, run: () => def.run(t.ctx).then((out) => (def.output ? def.output.parse(out) : out)) };
  };
}
const scan = step('scan');
const index = step('index');
const finalize = step('finalize');

/** Runs the whole plan uninterrupted, the way the worker would. */
async function runJob(input: FilesIndexInput, jobId: JobId = newJobId()): Promise<{ outputs: Record<string, unknown>; result: FilesIndexResult }> {
  const outputs: Record<string, unknown> = {};
  outputs['scan'] = await scan({ input, jobId }).run();
  outputs['index'] = await index({ input, jobId, outputs }).run();
  outputs['finalize'] = await finalize({ input, jobId, outputs }).run();
  return { outputs, result: filesIndex.result(outputs, input) as FilesIndexResult };
}

async function readIndex(path: string): Promise<IndexRecord[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => IndexRecordSchema.parse(JSON.parse(l)));
}

const EXPECTED_FILES = [
  'README.md',
  'assets/blob.dat',
  'assets/logo.png',
  'bin/run',
  'empty.txt',
  'large.log',
  'src/index.ts',
  'src/lib/deep/er/still.json',
  'src/lib/needle.ts',
];

describe('files.index input', () => {
  it('applies defaults and rejects a relative root or an unknown field', () => {
    const input = FilesIndexInputSchema.parse({ root: '/tmp' });
    expect(input).toEqual({ root: '/tmp', exclude: ['node_modules', '.git', 'dist', '.turbo', 'coverage'], maxFileBytes: 1048576, followSymlinks: false });
    expect(FilesIndexInputSchema.safeParse({ root: 'src' }).success).toBe(false);
    expect(FilesIndexInputSchema.safeParse({ root: '/tmp', followSymlinks: true }).success).toBe(false);
    expect(FilesIndexInputSchema.safeParse({ root: '/tmp', inclde: ['ts'] }).success).toBe(false);
  });

  it('plans scan, index, finalize', () => {
    expect(filesIndex.plan(inputFor('/tmp')).map((s) => [s.name, s.effect])).toEqual([
      ['scan', 'none'],
      ['index', 'none'],
      ['finalize', 'none'],
    ]);
  });
});

describe('scan', () => {
  it('lists files sorted, skipping excluded folders and symlinks, with sizes and progress in words', async () => {
    const tree = await fixture();
    const s = scan({ input: inputFor(tree.root), jobId: newJobId() });
    const out = ScanOutputSchema.parse(await s.run());
    expect(Array.isArray(out.files)).toBe(true);
    const files = out.files as { path: string; size: number }[];
    expect(files.map((f) => f.path)).toEqual(EXPECTED_FILES);
    for (const f of files) expect(f.size).toBe(tree.contents.get(f.path)?.length);
    expect(out).toMatchObject({ fileCount: 9, skipped: 1, bytes: files.reduce((n, f) => n + f.size, 0) });
    expect(out.folderCount).toBe(7);
    expect(s.progress.at(-1)?.message).toBe('scanned 9 files in 7 folders');
  });

  it('honours include patterns', async () => {
    const tree = await fixture();
    const out = (await scan({ input: inputFor(tree.root, { include: ['ts', 'README.md'] }), jobId: newJobId() }).run()) as ScanOutput;
    expect((out.files as { path: string }[]).map((f) => f.path)).toEqual(['README.md', 'src/index.ts', 'src/lib/needle.ts']);
  });

  it('stores a long file list in the blob store', async () => {
    const tree = await fixture({ bulk: 2100 });
    const out = ScanOutputSchema.parse(await scan({ input: inputFor(tree.root), jobId: newJobId() }).run());
    const ref = BlobRefSchema.parse(out.files);
    const list = JSON.parse((await blobs.get(ref)).toString('utf8')) as { path: string }[];
    expect(list).toHaveLength(2109);
    expect(out.fileCount).toBe(2109);
    expect(list[6]?.path).toBe('many/file-0000.txt');
  }, 30_000);

  it('rejects a root that does not exist', async () => {
    const run = scan({ input: inputFor('/definitely/not/here'), jobId: newJobId() }).run();
    await expect(run).rejects.toBeInstanceOf(InvalidInputError);
  });

  it('stops at once when the signal is already aborted', async () => {
    const tree = await fixture();
    const s = scan({ input: inputFor(tree.root), jobId: newJobId() });
    const reason = new CancelledError('stop');
    s.controller.abort(reason);
    await expect(s.run()).rejects.toBe(reason);
  });
});

describe('index and finalize', () => {
  it('writes one line per file with its sha256, and text only for text files', async () => {
    const tree = await fixture();
    const { result } = await runJob(inputFor(tree.root));
    const records = await readIndex(result.indexPath);
    expect(records.map((r) => r.path)).toEqual(EXPECTED_FILES);
    for (const r of records) {
      const content = tree.contents.get(r.path);
      expect(content, r.path).toBeDefined();
      expect(r.sha256).toBe(sha256(content ?? Buffer.alloc(0)));
      expect(r.size).toBe(content?.length);
    }
    const withText = records.filter((r) => r.text !== undefined).map((r) => r.path);
    expect(withText).toEqual(['README.md', 'bin/run', 'empty.txt', 'src/index.ts', 'src/lib/deep/er/still.json', 'src/lib/needle.ts']);
    expect(records.find((r) => r.path === 'src/lib/deep/er/still.json')?.text).toBe('{ "deep": true, "emoji": "héllo ✓" }\n');

    expect(result).toMatchObject({ files: 9, textFiles: 6, bytes: records.reduce((n, r) => n + r.size, 0) });
    expect(result.sha256).toBe(sha256(await readFile(result.indexPath)));
    const manifest = JSON.parse(await readFile(result.manifestPath, 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ root: tree.root, files: 9, textFiles: 6, indexPath: result.indexPath, sha256: result.sha256 });
    expect(typeof manifest['createdAt']).toBe('string');
  });

  it('reports progress per file in words', async () => {
    const tree = await fixture();
    const jobId = newJobId();
    const input = inputFor(tree.root);
    const outputs = { scan: await scan({ input, jobId }).run() };
    const s = index({ input, jobId, outputs });
    await s.run();
    expect(s.progress.map((p) => p.message)).toContain('indexed 3/9: assets/logo.png');
    expect(s.progress.at(-1)).toEqual({ done: 9, total: 9, message: 'indexed 9/9: src/lib/needle.ts' });
  });

  it('resumes from a saved cursor to exactly the index an uninterrupted run writes', async () => {
    const tree = await fixture({ bulk: 2100 });
    const input = inputFor(tree.root);
    const { result: reference } = await runJob(input);

    const jobId = newJobId();
    const outputs: Record<string, unknown> = { scan: await scan({ input, jobId }).run() };
    const first = index({
      input,
      jobId,
      outputs,
      onProgress: (p, controller) => {
        if (p.done === 1000) controller.abort(new CancelledError('worker shutting down'));
      },
    });
    await expect(first.run()).rejects.toThrow('worker shutting down');
    const cursor = first.cursor() as { nextIndex: number; bytesWritten: number };
    expect(cursor.nextIndex).toBeGreaterThanOrEqual(800);
    expect(cursor.nextIndex).toBeLessThanOrEqual(1000);
    expect(first.progress.at(-1)?.done).toBe(1000);

    // A crash mid-write leaves a torn line past the cursor; the resume must cut it off.
    const indexPath = join(await blobs.dirFor(`files-index/${jobId}`), 'index.jsonl');
    await appendFile(indexPath, '{"path":"torn li');

    const second = index({ input, jobId, outputs, cursor });
    outputs['index'] = await second.run();
    expect(second.progress[0]?.done).toBe(cursor.nextIndex + 1);
    outputs['finalize'] = await finalize({ input, jobId, outputs }).run();
    const resumed = filesIndex.result(outputs, input) as FilesIndexResult;

    expect(await readFile(resumed.indexPath)).toEqual(await readFile(reference.indexPath));
    expect(resumed.sha256).toBe(reference.sha256);
    expect(resumed.files).toBe(2109);
  }, 30_000);

  it('starts over when the cursor does not fit the index file', async () => {
    const tree = await fixture();
    const input = inputFor(tree.root);
    const { result: reference } = await runJob(input);
    const jobId = newJobId();
    const outputs: Record<string, unknown> = { scan: await scan({ input, jobId }).run() };
    const s = index({ input, jobId, outputs, cursor: { nextIndex: 5, bytesWritten: 999_999 } });
    outputs['index'] = await s.run();
    expect(s.progress[0]?.done).toBe(1);
    expect(await readFile((outputs['index'] as { indexPath: string }).indexPath)).toEqual(await readFile(reference.indexPath));
  });

  it('throws the abort reason promptly when cancelled mid-walk', async () => {
    const tree = await fixture({ bulk: 50 });
    const input = inputFor(tree.root);
    const jobId = newJobId();
    const outputs = { scan: await scan({ input, jobId }).run() };
    const reason = new CancelledError('cancelled by the user');
    const s = index({
      input,
      jobId,
      outputs,
      onProgress: (p, controller) => {
        if (p.done === 3) controller.abort(reason);
      },
    });
    await expect(s.run()).rejects.toBe(reason);
    expect(s.progress.map((p) => p.done)).toEqual([1, 2, 3]);
  });
});
