import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { MIGRATIONS_FOLDER, runMigrations } from '../db/migrate.js';
import { sha256Hex } from '../hash/idempotency-hash.js';
import { createDb } from '../db/client.js';
import type { DbHandle } from '../db/client.js';

export interface TestDatabase extends DbHandle {
  url: string;
  /** Closes the pool and drops the database. */
  drop(): Promise<void>;
}

const ADMIN_URL = process.env.STEPWISE_TEST_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
// Named by the migrations it holds, so a changed migration set gets a fresh template instead of
// a stale one (Postgres outlives test runs on developer machines and CI).
const TEMPLATE = `stepwise_tpl_${sha256Hex(
  readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER })
    .map((m) => m.hash)
    .join(','),
).slice(0, 12)}`;

let templateReady: Promise<void> | undefined;

function withDb(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Migrates the template once per process; cloning it is far faster than migrating each time. */
async function ensureTemplate(): Promise<void> {
  templateReady ??= (async () => {
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    try {
      // One process at a time rebuilds the template; others wait on the lock and reuse it.
      await admin`select pg_advisory_lock(424242)`;
      try {
        await runMigrations(withDb(ADMIN_URL, TEMPLATE));
      } finally {
        await admin`select pg_advisory_unlock(424242)`;
      }
    } finally {
      await admin.end({ timeout: 1 });
    }
  })();
  return templateReady;
}

/**
 * A fresh, migrated database for one test file: cloned from a template, dropped afterwards.
 * Uses the real Postgres at STEPWISE_TEST_ADMIN_URL (default the local server).
 */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  await ensureTemplate();
  const name = `stepwise_t_${label.replace(/[^a-z0-9]/gi, '').toLowerCase().slice(0, 20)}_${randomBytes(4).toString('hex')}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    // CREATE DATABASE … TEMPLATE fails while another session is connected to the template.
    for (let i = 0; ; i++) {
      try {
        await admin.unsafe(`create database "${name}" template "${TEMPLATE}"`);
        break;
      } catch (e: unknown) {
        if ((e as { code?: string }).code !== '55006' || i > 50) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    await admin.end({ timeout: 1 });
  }
  const url = withDb(ADMIN_URL, name);
  const handle = createDb(url, { max: 20 });
  return {
    ...handle,
    url,
    async drop() {
      await handle.close();
      const a = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end({ timeout: 1 });
      }
    },
  };
}
