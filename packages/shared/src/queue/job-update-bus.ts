import type { Redis } from 'ioredis';
import type { JobId, TenantId } from '../ids.js';
import { channels } from './channels.js';
import type { CancelNotice, JobUpdate, JobUpdateInput } from './job-update.js';
import { CancelNoticeSchema, JobUpdateSchema } from './job-update.js';

/**
 * Live notifications over Redis pub/sub. Best effort by nature: a missed message only delays a
 * waiter until its next read of Postgres, which stays the source of truth.
 */
export class JobUpdateBus {
  readonly #listeners = new Map<string, Set<(u: JobUpdate) => void>>();
  readonly #cancelListeners = new Set<(tenantId: TenantId, n: CancelNotice) => void>();
  #cancelSubscribed = false;

  constructor(
    private readonly pub: Redis,
    /** A dedicated connection: a Redis connection in subscribe mode can do nothing else. */
    private readonly sub: Redis,
    private readonly prefix: string,
  ) {
    sub.on('message', (channel: string, message: string) => this.#dispatch(channel, message));
    sub.on('pmessage', (_pattern: string, channel: string, message: string) => this.#dispatchCancel(channel, message));
  }

  async publishUpdate(tenantId: TenantId, update: JobUpdateInput): Promise<void> {
    await this.pub.publish(channels.jobUpdates(this.prefix, tenantId, update.jobId as JobId), JSON.stringify(update));
  }

  async publishCancel(tenantId: TenantId, notice: CancelNotice): Promise<void> {
    await this.pub.publish(channels.cancel(this.prefix, tenantId), JSON.stringify(notice));
  }

  /** Calls `listener` for each update of one job until the returned function is called. */
  async subscribe(tenantId: TenantId, jobId: JobId, listener: (u: JobUpdate) => void): Promise<() => Promise<void>> {
    const channel = channels.jobUpdates(this.prefix, tenantId, jobId);
    let set = this.#listeners.get(channel);
    if (!set) {
      set = new Set();
      this.#listeners.set(channel, set);
      await this.sub.subscribe(channel);
    }
    set.add(listener);
    return async () => {
      const s = this.#listeners.get(channel);
      if (!s) return;
      s.delete(listener);
      if (s.size === 0) {
        this.#listeners.delete(channel);
        await this.sub.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  /** Workers: hear every tenant's cancel notices. */
  async onCancel(listener: (tenantId: TenantId, n: CancelNotice) => void): Promise<void> {
    this.#cancelListeners.add(listener);
    if (!this.#cancelSubscribed) {
      this.#cancelSubscribed = true;
      await this.sub.psubscribe(channels.cancelPattern(this.prefix));
    }
  }

  #dispatch(channel: string, message: string): void {
    const set = this.#listeners.get(channel);
    if (!set) return;
    const parsed = JobUpdateSchema.safeParse(safeJson(message));
    if (!parsed.success) return;
    for (const l of set) l(parsed.data);
  }

  #dispatchCancel(channel: string, message: string): void {
    const m = /:t:([^:]+):cancel$/.exec(channel);
    const parsed = CancelNoticeSchema.safeParse(safeJson(message));
    if (!m?.[1] || !parsed.success) return;
    for (const l of this.#cancelListeners) l(m[1] as TenantId, parsed.data);
  }
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
