/**
 * DESIGN §7: progress is persisted at most every `intervalMs` (500 ms), and sooner only when it
 * moved by at least `minPercent` (1%) — so a fast job does not flood Postgres and a slow one
 * still shows movement. Pure: the caller passes the clock.
 */
export class ProgressThrottle {
  #lastAt: number;
  #lastFraction = 0;

  /**
   * @param startedAt when the work began: nothing is written in the first `floorMs`, so a job that
   *   finishes quickly costs no progress writes at all (its checkpoints carry the progress).
   */
  constructor(
    startedAt: number,
    readonly intervalMs = 500,
    readonly minPercent = 1,
    /** Even a 1% jump waits this long, so a 100-item loop doesn't write 100 times a second. */
    readonly floorMs = 100,
  ) {
    this.#lastAt = startedAt;
  }

  /** True when this update should be written now; records it as written if so. */
  shouldFlush(now: number, done: number, total: number | null): boolean {
    const elapsed = now - this.#lastAt;
    const fraction = total && total > 0 ? done / total : Number.NaN;
    // The epsilon absorbs float error: (0.11 - 0.10) * 100 is 0.9999…, which is a 1% move.
    const moved = Number.isNaN(fraction) ? false : (fraction - this.#lastFraction) * 100 >= this.minPercent - 1e-9;
    if (elapsed >= this.intervalMs || (moved && elapsed >= this.floorMs)) {
      this.#lastAt = now;
      if (!Number.isNaN(fraction)) this.#lastFraction = fraction;
      return true;
    }
    return false;
  }
}
