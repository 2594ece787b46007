import { runMigrations } from '@stepwise/shared';
import type { CliConfig } from '../config.js';
import { out, safeUrl } from '../output.js';

/** `stepwise migrate`: creates the database if missing and applies every pending migration. */
export async function migrateCommand(config: CliConfig): Promise<void> {
  await runMigrations(config.DATABASE_URL);
  out(`Migrations applied to ${safeUrl(config.DATABASE_URL)}.`);
}
