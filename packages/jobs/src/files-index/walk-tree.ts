import { lstat, readdir, realpath } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PathFilter } from './path-patterns.js';
import { throwIfAborted } from './throw-if-aborted.js';

/** One regular file found by the walk. */
export interface WalkedFile {
  /** Relative to the root, `/`-separated on every OS. */
  path: string;
  /** Bytes, as `lstat` saw them during the walk. */
  size: number;
}

export interface WalkStats {
  fileCount: number;
  /** Folders read, the root included. */
  folderCount: number;
  bytes: number;
  /** Symlinks, sockets, FIFOs, devices, and entries that vanished or could not be read. */
  skipped: number;
}

export interface WalkResult extends WalkStats {
  /** In walk order: depth-first, entries of each folder sorted by UTF-16 code units. */
  files: WalkedFile[];
}

export interface WalkOptions {
  /** Files to keep; undefined keeps every file. Not applied to folders. */
  include?: PathFilter | undefined;
  /** Folders and files to skip (a skipped folder is not entered). */
  exclude?: PathFilter | undefined;
  /** Absolute folders never to enter, e.g. the job's own output folder when it lies inside the root. */
  skipDirs?: readonly string[];
  signal: AbortSignal;
  /** Called after each folder is read, for progress reports. */
  onFolder?(stats: WalkStats): void;
}

// Enough parallel lstat calls to hide disk latency without flooding libuv's thread pool.
const STAT_BATCH = 32;

// Errors that mean "this entry is gone or not ours to read": skip it, keep walking.
const SKIPPABLE = new Set(['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'ELOOP']);

function errorCode(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function byCodeUnits(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Lists the regular files under `root`, deterministically: the same tree always gives the same
 * list in the same order, which is what lets the index step resume by position. Symlinks are
 * never followed. Checks `signal` before every folder read.
 * @throws the signal's reason when aborted; the underlying error when `root` cannot be read.
 */
export async function walkTree(root: string, options: WalkOptions): Promise<WalkResult> {
  const { include, exclude, signal, onFolder } = options;
  // Real paths on both sides, so a skip folder is recognised even when reached through a symlinked parent.
  const skipDirs = new Set(await Promise.all((options.skipDirs ?? []).map((d) => realpath(d).catch(() => resolve(d)))));
  const files: WalkedFile[] = [];
  const stats: WalkStats = { fileCount: 0, folderCount: 0, bytes: 0, skipped: 0 };

  async function visit(abs: string, rel: string, isRoot: boolean): Promise<void> {
    throwIfAborted(signal);
    let entries: Dirent[];
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch (e: unknown) {
      // The root itself must be readable; a folder deeper down may vanish or be private.
      if (isRoot || !SKIPPABLE.has(errorCode(e) ?? '')) throw e;
      stats.skipped++;
      return;
    }
    stats.folderCount++;
    entries.sort(byCodeUnits);

    const kept: Dirent[] = [];
    for (const entry of entries) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (exclude?.(childRel, entry.name)) continue;
      if (entry.isDirectory()) {
        if (skipDirs.has(resolve(abs, entry.name))) continue;
        kept.push(entry);
      } else if (entry.isFile()) {
        if (include && !include(childRel, entry.name)) continue;
        kept.push(entry);
      } else {
        // Symlinks are not followed (a link can point outside the root or loop); FIFOs and
        // devices would block or never end when read.
        stats.skipped++;
      }
    }

    // Sizes for this folder's files, in parallel batches, kept in entry order.
    const sizes = new Map<string, number>();
    const fileEntries = kept.filter((e) => e.isFile());
    for (let i = 0; i < fileEntries.length; i += STAT_BATCH) {
      const batch = fileEntries.slice(i, i + STAT_BATCH);
      const results = await Promise.all(
        batch.map(async (entry) => {
          try {
            const st = await lstat(join(abs, entry.name));
            return st.isFile() ? st.size : undefined;
          } catch (e: unknown) {
            if (SKIPPABLE.has(errorCode(e) ?? '')) return undefined;
            throw e;
          }
        }),
      );
      batch.forEach((entry, k) => {
        const size = results[k];
        if (size !== undefined) sizes.set(entry.name, size);
      });
    }

    for (const entry of kept) {
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        await visit(join(abs, entry.name), childRel, false);
        continue;
      }
      const size = sizes.get(entry.name);
      if (size === undefined) {
        stats.skipped++;
        continue;
      }
      files.push({ path: childRel, size });
      stats.fileCount++;
      stats.bytes += size;
    }
    onFolder?.({ ...stats });
  }

  await visit(await realpath(root), '', true);
  return { ...stats, files };
}
