import { createDb, migrationsApplied } from '@stepwise/shared';
import type { DbHandle } from '@stepwise/shared';
import { CliError } from './cli-error.js';
import { safeUrl } from './output.js';

/**
 * Opens the database for a keys command, refusing an unmigrated one with what to do about it
 * (the keys commands never migrate by themselves: that is `stepwise migrate`'s decision).
 */
export async function openMigratedDb(url: string): Promise<DbHandle> {
  const handle = createDb(url, { max: 2, applicationName: 'stepwise-cli' });
  try {
    if (!(await migrationsApplied(handle.sql))) {
      throw new CliError(`the database at ${safeUrl(url)} is not migrated to this version: run \`stepwise migrate\` first`);
    }
    return handle;
  } catch (e: unknown) {
    await handle.close();
    throw e;
  }
}
