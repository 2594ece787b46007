import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import { readMigrationFiles } from 'drizzle-orm/migrator';

/** Generated migrations ship inside this package (packages/shared/drizzle). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK_ID = 0x5757_0001;

/**
 * Creates the database named in `url` when it does not exist yet. A fresh machine then needs
 * no manual `createdb` before the first start.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) return;
  const probe = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await probe`select 1`;
    return;
  } catch (e: unknown) {
    if ((e as { code?: string }).code !== '3D000') throw e;
  } finally {
    await probe.end({ timeout: 1 });
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const root = postgres(admin.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await root.unsafe(`create database "${name.replace(/"/g, '""')}"`);
  } catch (e: unknown) {
    // Another process won the race; that is the outcome we wanted. Postgres reports a concurrent
    // CREATE DATABASE as 42P04 (exists) or, mid-race, 23505 (unique violation in pg_database).
    const code = (e as { code?: string }).code;
    if (code !== '42P04' && code !== '23505') throw e;
  } finally {
    await root.end({ timeout: 1 });
  }
}

/**
 * Applies pending migrations. Both apps call this at start-up, so it serializes on a session
 * advisory lock: drizzle's migrator is not safe to run concurrently with itself.
 */
export async function runMigrations(url: string): Promise<void> {
  await ensureDatabase(url);
  const client = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK_ID})`;
    try {
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER });
    } finally {
      await client`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`;
    }
  } finally {
    await client.end({ timeout: 5 });
  }
}

/** True when every migration this build ships has been applied; what `/readyz` reports. */
export async function migrationsApplied(sql: postgres.Sql): Promise<boolean> {
  const shipped = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER });
  const last = shipped[shipped.length - 1];
  if (!last) return true;
  try {
    const rows = await sql<{ created_at: string }[]>`
      select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`;
    const applied = rows[0] ? Number(rows[0].created_at) : 0;
    return applied >= last.folderMillis;
  } catch (e: unknown) {
    if ((e as { code?: string }).code === '42P01' || (e as { code?: string }).code === '3F000') return false;
    throw e;
  }
}
