/** Decides from a path relative to the root (with `/` separators) and its base name. */
export type PathFilter = (relPath: string, name: string) => boolean;

/** Folders and files `files.index` skips unless the caller gives its own `exclude` list. */
export const DEFAULT_EXCLUDE: readonly string[] = ['node_modules', '.git', 'dist', '.turbo', 'coverage'];

const WILDCARD = /[*?]/;

/**
 * A glob as a RegExp over a whole path: `**` crosses folders, `*` and `?` stay within one.
 * Case-insensitive, because people (and LLMs) write `*.md` and mean `README.MD` too.
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] ?? '';
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        source += '(?:.*/)?';
      } else {
        source += '.*';
      }
    } else if (c === '*') {
      source += '[^/]*';
    } else if (c === '?') {
      source += '[^/]';
    } else {
      source += c.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`, 'i');
}

/** A pattern with a `/` is matched against the relative path; otherwise against the base name. */
function compile(pattern: string): PathFilter {
  const p = pattern.replace(/^\.\//, '').replace(/\/+$/, '');
  const onPath = p.includes('/');
  const re = WILDCARD.test(p) ? globToRegExp(p) : new RegExp(`^${p.replace(/[\\^$.*+?|()[\]{}]/g, '\\$&')}$`, 'i');
  return (relPath, name) => re.test(onPath ? relPath : name);
}

/**
 * Which files to index. Each pattern is an extension (`ts`, `.md`, `.d.ts`), a file name
 * (`Dockerfile`, `README.md`; a bare word matches either way) or a glob (`*.test.ts`,
 * `src/**\/*.js`). Returns undefined for "everything".
 */
export function includeFilter(patterns: readonly string[] | undefined): PathFilter | undefined {
  if (!patterns || patterns.length === 0) return undefined;
  const filters = patterns.map((raw): PathFilter => {
    const p = raw.trim();
    // A leading-dot word (`.md`, `.d.ts`) is an extension. A bare word is an extension or a whole
    // name: `ts` and `Makefile` both do what they say.
    if (/^\.[A-Za-z0-9_+-]+(\.[A-Za-z0-9_+-]+)*$/.test(p)) {
      const suffix = p.toLowerCase();
      return (_relPath, name) => name.toLowerCase().endsWith(suffix);
    }
    if (/^[A-Za-z0-9_+-]+$/.test(p)) {
      const word = p.toLowerCase();
      return (_relPath, name) => {
        const lower = name.toLowerCase();
        return lower === word || lower.endsWith(`.${word}`);
      };
    }
    return compile(p);
  });
  return (relPath, name) => filters.some((f) => f(relPath, name));
}

/** Which folders and files to skip: names (`node_modules`), globs (`*.lock`) or paths (`docs/old`). */
export function excludeFilter(patterns: readonly string[]): PathFilter {
  const filters = patterns.map((p) => compile(p.trim()));
  return (relPath, name) => filters.some((f) => f(relPath, name));
}
