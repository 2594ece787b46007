import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { IndexRecordSchema } from './index-record.js';

/** One hit in a files.index index. */
export interface SearchMatch {
  /** The file, relative to the indexed root. */
  path: string;
  /** 1-based line of the file's text; 0 when the query matched the path itself. */
  line: number;
  /** The matching line (or the path), trimmed, cut to about 200 characters around the match. */
  snippet: string;
}

const SNIPPET_CHARS = 200;
const CONTEXT_BEFORE = 60;

function snippetOf(line: string, lowerLine: string, query: string): string {
  const text = line.trim();
  if (text.length <= SNIPPET_CHARS) return text;
  // Lower-casing can change a string's length (e.g. "İ"); then fall back to the line's start.
  const at = lowerLine.length === line.length ? Math.max(0, lowerLine.indexOf(query)) : 0;
  const start = Math.max(0, at - CONTEXT_BEFORE);
  const end = Math.min(line.length, start + SNIPPET_CHARS);
  return `${start > 0 ? '…' : ''}${line.slice(start, end).trim()}${end < line.length ? '…' : ''}`;
}

/**
 * Finds `query` (case-insensitive substring) in the paths and texts of a JSONL index written by
 * `files.index`, streaming it so an index of any size fits in memory. Each matching line is one
 * match, in index order; a path that matches gives a match with `line: 0` first.
 * @param indexPath the job result's `indexPath`
 * @param limit stop after this many matches
 * @returns at most `limit` matches; none for an empty query. Lines that are not records are skipped.
 */
export async function searchIndex(indexPath: string, query: string, limit = 20): Promise<SearchMatch[]> {
  const needle = query.toLowerCase();
  const matches: SearchMatch[] = [];
  if (needle === '' || limit <= 0) return matches;
  const stream = createReadStream(indexPath, { encoding: 'utf8' });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const raw of lines) {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        continue;
      }
      const record = IndexRecordSchema.safeParse(value);
      if (!record.success) continue;
      const { path, text } = record.data;
      if (path.toLowerCase().includes(needle)) {
        matches.push({ path, line: 0, snippet: path });
        if (matches.length >= limit) break;
      }
      if (text === undefined || !text.toLowerCase().includes(needle)) continue;
      const textLines = text.split('\n');
      for (let i = 0; i < textLines.length && matches.length < limit; i++) {
        const line = textLines[i] ?? '';
        const lower = line.toLowerCase();
        if (lower.includes(needle)) matches.push({ path, line: i + 1, snippet: snippetOf(line, lower, needle) });
      }
      if (matches.length >= limit) break;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return matches;
}
