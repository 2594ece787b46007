#!/usr/bin/env node
// Every check CI runs, in order: lint, typecheck, build, migration drift, infra validation, then
// every test suite (unit, integration against real Postgres + Redis, end-to-end through real MCP
// clients, crash matrix) and finally the chaos suite on its own.
// Ends with one summary line, "tests: N passed, N failed, N skipped".
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => join(root, 'node_modules/.bin', name);
// turbo looks pnpm up on PATH; put the pinned one (a root dev dependency) there first.
const env = {
  ...process.env,
  PATH: `${join(root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
  TURBO_TELEMETRY_DISABLED: '1',
  FORCE_COLOR: process.env.FORCE_COLOR ?? '0',
};
const results = join(root, '.test-results');
rmSync(results, { recursive: true, force: true });
mkdirSync(results, { recursive: true });

const suites = (process.env.STEPWISE_TEST_PROJECTS ?? 'unit,integration,e2e').split(',');
const steps = [
  ['lint', bin('eslint'), ['.']],
  ['typecheck', bin('turbo'), ['run', 'typecheck', '--output-logs=errors-only']],
  ['build', bin('turbo'), ['run', 'build', '--output-logs=errors-only']],
  ['migrations', process.execPath, [join(root, 'packages/shared/scripts/check-migrations.mjs')]],
  ['infra', 'bash', [join(root, 'infra/validate.sh')]],
  [
    'tests',
    bin('vitest'),
    ['run', ...suites.flatMap((p) => ['--project', p]), '--reporter=default', '--reporter=json', `--outputFile.json=${join(results, 'tests.json')}`],
  ],
  // The chaos suite kills workers, flushes Redis and restarts Postgres, so it runs on its own,
  // after everything else. STEPWISE_SKIP_CHAOS=1 leaves it out (e.g. on a shared database server).
  ...(process.env.STEPWISE_SKIP_CHAOS === '1'
    ? []
    : [['chaos', bin('vitest'), ['run', '--project', 'chaos', '--reporter=default', '--reporter=json', `--outputFile.json=${join(results, 'chaos.json')}`]]]),
];

let failed = false;
for (const [name, cmd, args] of steps) {
  process.stdout.write(`\n== ${name}: ${[cmd.replace(root, ''), ...args].join(' ')}\n`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, env, stdio: 'inherit' });
  process.stdout.write(`== ${name}: ${r.status === 0 ? 'ok' : `FAILED (exit ${r.status ?? r.signal})`} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  if (r.status !== 0) {
    failed = true;
    if (name !== 'tests' && name !== 'chaos') break;
  }
}

const totals = { passed: 0, failed: 0, skipped: 0, total: 0 };
for (const file of ['tests.json', 'chaos.json']) {
  try {
    const report = JSON.parse(readFileSync(join(results, file), 'utf8'));
    totals.passed += report.numPassedTests;
    totals.failed += report.numFailedTests;
    totals.skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
    totals.total += report.numTotalTests;
  } catch {
    // A suite that did not run (or crashed before reporting) counts as one failure, unless skipped on purpose.
    if (file === 'tests.json' || process.env.STEPWISE_SKIP_CHAOS !== '1') totals.failed += 1;
  }
}
if (totals.total === 0) failed = true;
process.stdout.write(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`);
process.exit(failed ? 1 : 0);
