import { describe, expect, it } from 'vitest';
import { excludeFilter, globToRegExp, includeFilter } from './path-patterns.js';

const name = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

describe('includeFilter', () => {
  it('keeps everything when there are no patterns', () => {
    expect(includeFilter(undefined)).toBeUndefined();
    expect(includeFilter([])).toBeUndefined();
  });

  it('treats bare and dotted words as extensions, case-insensitively', () => {
    const f = includeFilter(['ts', '.MD']);
    expect(f?.('src/a.ts', 'a.ts')).toBe(true);
    expect(f?.('README.md', 'README.md')).toBe(true);
    expect(f?.('src/a.tsx', 'a.tsx')).toBe(false);
  });

  it('matches file names and globs', () => {
    const f = includeFilter(['Dockerfile', '*.test.ts', 'docs/**/*.txt']);
    for (const p of ['Dockerfile', 'infra/Dockerfile', 'src/x.test.ts', 'docs/a.txt', 'docs/a/b/c.txt']) expect(f?.(p, name(p))).toBe(true);
    for (const p of ['src/x.ts', 'other/docs/a.txt', 'Dockerfile.dev']) expect(f?.(p, name(p))).toBe(false);
  });
});

describe('excludeFilter', () => {
  it('skips names anywhere, globs and root-relative paths', () => {
    const f = excludeFilter(['node_modules', '*.lock', 'docs/old']);
    for (const p of ['node_modules', 'a/node_modules', 'pnpm.lock', 'docs/old']) expect(f(p, name(p))).toBe(true);
    for (const p of ['src', 'docs', 'x/docs/old', 'node_modules2']) expect(f(p, name(p))).toBe(false);
  });
});

describe('globToRegExp', () => {
  it('keeps * within a folder and lets ** cross folders', () => {
    expect(globToRegExp('src/*.ts').test('src/a.ts')).toBe(true);
    expect(globToRegExp('src/*.ts').test('src/a/b.ts')).toBe(false);
    expect(globToRegExp('src/**/*.ts').test('src/a.ts')).toBe(true);
    expect(globToRegExp('src/**/*.ts').test('src/a/b.ts')).toBe(true);
    expect(globToRegExp('a+b(1).txt').test('a+b(1).txt')).toBe(true);
  });
});
