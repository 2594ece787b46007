import type { Logger } from '@stepwise/shared';
import { LeaseLostError } from '@stepwise/shared';
import type { CheckpointWriter } from './checkpoint-writer.js';

/**
 * Renews the job's lease every third of its length. A renewal that hits no row means another
 * worker fenced us out: `onLost` fires so the run stops at once. A renewal that fails for any
 * other reason (Postgres briefly down) is retried on the next beat; if the lease expires in the
 * meantime the next fenced write will find out.
 */
export class LeaseKeeper {
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly writer: CheckpointWriter,
    private readonly leaseMs: number,
    private readonly onLost: (e: LeaseLostError) => void,
    private readonly onCancelSeen: () => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.#timer = setInterval(() => void this.#beat(), Math.max(200, Math.floor(this.leaseMs / 3)));
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #beat(): Promise<void> {
    try {
      await this.writer.renew(this.leaseMs);
      if (this.writer.cancelRequested) this.onCancelSeen();
    } catch (e: unknown) {
      if (e instanceof LeaseLostError) {
        this.stop();
        this.onLost(e);
      } else {
        this.log.warn({ err: e }, 'lease renewal failed; will retry');
      }
    }
  }
}
