import { defineConfig } from 'vitest/config';

// Resolve workspace packages to their TypeScript sources, so tests never run stale builds.
const conditions = ['@stepwise/source', 'node', 'import', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['@stepwise/source'] } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['{apps,packages}/*/src/**/*.test.ts'],
          exclude: ['**/*.int.test.ts', '**/*.e2e.test.ts', '**/*.chaos.test.ts', '**/node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['{apps,packages}/*/src/**/*.int.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['{apps,packages}/*/test/**/*.e2e.test.ts', 'test/**/*.e2e.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 90_000,
          fileParallelism: false,
        },
      },
      {
        // Kills workers, flushes Redis, restarts Postgres: run alone (pnpm test:chaos), never
        // alongside other suites that share those services.
        extends: true,
        test: {
          name: 'chaos',
          include: ['{apps,packages}/*/test/**/*.chaos.test.ts'],
          // One retry: these scenarios restart shared services on a shared machine. A retry is
          // reported in the run's output, and a real defect fails both attempts.
          retry: 1,
          testTimeout: 240_000,
          hookTimeout: 90_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
