#!/usr/bin/env node
// Fails when src/db/schema.ts has changes that no committed migration covers: drizzle-kit
// generates into a scratch copy of drizzle/, and any new file there means drift.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('..', import.meta.url));
// drizzle-kit resolves --out relative to the working directory, so the scratch copy lives here.
const scratchName = mkdtempSync(join(pkg, '.migrations-check-')).slice(pkg.length);
const scratch = join(pkg, scratchName);
try {
  cpSync(join(pkg, 'drizzle'), scratch, { recursive: true });
  const before = new Set(readdirSync(scratch));
  const out = execFileSync(
    join(pkg, 'node_modules/.bin/drizzle-kit'),
    ['generate', '--dialect', 'postgresql', '--schema', './src/db/schema.ts', '--out', `./${scratchName}`, '--name', 'drift'],
    { cwd: pkg, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
  );
  const added = readdirSync(scratch).filter((f) => !before.has(f));
  if (added.length === 0 && !/No schema changes/.test(out)) {
    process.stderr.write(`Could not check migrations; drizzle-kit said:\n${out}\n`);
    process.exit(1);
  }
  if (added.length > 0) {
    process.stderr.write(`Schema drift: src/db/schema.ts changed without a migration (would generate ${added.join(', ')}).\nRun: pnpm db:generate\n`);
    process.exit(1);
  }
  process.stdout.write('migrations: schema and committed migrations agree\n');
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
