import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import * as schema from './schema.js';

export type Db = PostgresJsDatabase<typeof schema>;
/** A transaction handle; ops accept either, and the caller owns the transaction. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

export interface DbHandle {
  db: Db;
  /** The underlying postgres.js client, for LISTEN-free raw work such as health checks. */
  sql: postgres.Sql;
  close(): Promise<void>;
}

export interface CreateDbOptions {
  /** Pool size. */
  max?: number;
  /** Seconds to wait for a connection before failing (so callers get a fast, retryable error). */
  connectTimeoutS?: number;
  applicationName?: string;
}

/** Opens a pooled connection. Nothing connects until the first query. */
export function createDb(url: string, options: CreateDbOptions = {}): DbHandle {
  const client = postgres(url, {
    max: options.max ?? 10,
    connect_timeout: options.connectTimeoutS ?? 5,
    idle_timeout: 30,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'stepwise' },
  });
  const db = drizzle(client, { schema });
  return {
    db,
    sql: client,
    close: () => client.end({ timeout: 5 }),
  };
}
