import type { Db } from '../db/client.js';
import type { AuditRecord } from '../db/ops/append-audit.js';
import { appendAuditBatch } from '../db/ops/append-audit.js';
import type { Logger } from '../log/logger.js';
import { isTransientPostgresCode } from '../errors/classify-error.js';

/** Where tool calls record their audit events. */
export interface AuditSink {
  /** Resolves once the record is accepted (queued or written); waits while the sink is full. */
  append(record: AuditRecord): Promise<void>;
}

export interface AuditBufferOptions {
  /** Rows per INSERT; reaching it flushes at once. Default 200. */
  maxBatch?: number;
  /** A partial batch waits at most this long. Default 250 ms. */
  flushIntervalMs?: number;
  /** Rows held (queued + in flight) before `append()` waits (backpressure). Default 10,000. */
  maxPending?: number;
  /** Pause before retrying a failed INSERT (the rows are kept). Default 1,000 ms. */
  retryDelayMs?: number;
}

/**
 * Batches audit rows of read calls and failed calls into multi-row INSERTs (DESIGN §8). Nothing is
 * dropped: a failed INSERT keeps its rows and is retried, a full buffer makes `append()` wait
 * (backpressure on the caller, not loss), and `close()` flushes what is left.
 * Mutating calls do NOT use this: their audit row commits in their own transaction.
 */
export class AuditBuffer implements AuditSink {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #maxBatch: number;
  readonly #intervalMs: number;
  readonly #maxPending: number;
  readonly #retryDelayMs: number;
  #queue: AuditRecord[] = [];
  #inFlight = 0;
  #waiters: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #closed = false;

  constructor(db: Db, log: Logger, o: AuditBufferOptions = {}) {
    this.#db = db;
    this.#log = log;
    this.#maxBatch = o.maxBatch ?? 200;
    this.#intervalMs = o.flushIntervalMs ?? 250;
    this.#maxPending = Math.max(o.maxPending ?? 10_000, this.#maxBatch);
    this.#retryDelayMs = o.retryDelayMs ?? 1000;
  }

  /** Rows accepted but not yet committed. */
  get pending(): number {
    return this.#queue.length + this.#inFlight;
  }

  /** @throws Error after close(): a late record must be noticed, not silently lost. */
  async append(record: AuditRecord): Promise<void> {
    while (this.pending >= this.#maxPending) {
      if (this.#closed) break;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    if (this.#closed) throw new Error('audit buffer is closed');
    this.#queue.push(record);
    if (this.#queue.length >= this.#maxBatch) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs);
  }

  /** Writes everything queued so far (in batches); resolves when it is committed. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#flushing ??= this.#drain().finally(() => {
      this.#flushing = undefined;
      // Rows appended while this drain was finishing: a full batch goes now, a partial one on the timer.
      if (this.#closed || this.#queue.length === 0) return;
      if (this.#queue.length >= this.#maxBatch) void this.flush();
      else this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs);
    });
    return this.#flushing;
  }

  /** Stops accepting, then flushes (retrying failed INSERTs up to `attempts` times). */
  async close(attempts = 5): Promise<void> {
    this.#closed = true;
    for (const wake of this.#waiters.splice(0)) wake();
    for (let i = 0; i < attempts && this.pending > 0; i++) await this.flush();
    if (this.pending > 0) this.#log.error({ lost: this.pending }, 'audit rows could not be written before shutdown');
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      this.#inFlight += batch.length;
      try {
        await appendAuditBatch(this.#db, batch);
      } catch (e: unknown) {
        if (refusedByPostgres(e)) {
          // Postgres refused the rows themselves: write them one by one so one bad row cannot
          // block every later audit event; a row refused alone goes to the error log in full.
          await this.#oneByOne(batch);
          this.#inFlight -= batch.length;
          this.#wake();
          continue;
        }
        // Keep the rows, in order, and try again later: an audit event is never dropped.
        this.#queue.unshift(...batch);
        this.#log.warn({ err: e, rows: batch.length, queued: this.#queue.length }, 'audit batch not written; retrying');
        this.#inFlight -= batch.length;
        await new Promise((r) => setTimeout(r, this.#closed ? 100 : this.#retryDelayMs));
        return;
      }
      this.#inFlight -= batch.length;
      this.#wake();
    }
  }

  async #oneByOne(batch: AuditRecord[]): Promise<void> {
    for (const row of batch) {
      try {
        await appendAuditBatch(this.#db, [row]);
      } catch (e: unknown) {
        this.#log.error({ err: e, audit: row }, 'audit row refused by Postgres; logged here instead');
      }
    }
  }

  #wake(): void {
    let room = this.#maxPending - this.pending;
    while (room-- > 0 && this.#waiters.length > 0) this.#waiters.shift()?.();
  }
}

/** Postgres answered with a non-transient SQLSTATE (bad data, not a dead connection). */
function refusedByPostgres(e: unknown): boolean {
  for (let cur = e, depth = 0; cur && typeof cur === 'object' && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const { code, severity } = cur as { code?: unknown; severity?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && severity !== undefined) return !isTransientPostgresCode(code);
  }
  return false;
}
