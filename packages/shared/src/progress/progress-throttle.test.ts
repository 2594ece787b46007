import { describe, it, expect } from 'vitest';
import { ProgressThrottle } from './progress-throttle.js';

// The throttle is pure: every test passes its own clock values, so nothing here depends on timing.
// The clock starts at `startedAt` (the constructor's first argument).

describe('ProgressThrottle', () => {
  it('defaults to 500 ms / 1% / 100 ms floor (DESIGN §7)', () => {
    const t = new ProgressThrottle(0);
    expect(t.intervalMs).toBe(500);
    expect(t.minPercent).toBe(1);
    expect(t.floorMs).toBe(100);
  });

  it('writes nothing in the first floorMs after the start, however far progress jumps', () => {
    const t = new ProgressThrottle(1_000);
    expect(t.shouldFlush(1_000, 0, 100)).toBe(false);
    expect(t.shouldFlush(1_050, 50, 100)).toBe(false);
    expect(t.shouldFlush(1_099, 100, 100)).toBe(false);
  });

  it('a job that finishes quickly without moving costs no writes at all', () => {
    const t = new ProgressThrottle(0);
    for (let ms = 0; ms < 500; ms += 10) expect(t.shouldFlush(ms, 0, 10)).toBe(false);
  });

  it('after the floor, a 1% move since the start is written', () => {
    const t = new ProgressThrottle(0);
    expect(t.shouldFlush(100, 2, 100)).toBe(true);
  });

  it('holds back updates that neither waited 500 ms nor moved 1%', () => {
    const t = new ProgressThrottle(0);
    expect(t.shouldFlush(100, 20, 1000)).toBe(true); // 2% after the floor
    expect(t.shouldFlush(250, 25, 1000)).toBe(false); // +0.5%
    expect(t.shouldFlush(599, 29, 1000)).toBe(false); // +0.9%, 499 ms
  });

  it('writes once 500 ms have passed since the last write, whatever the movement', () => {
    const t = new ProgressThrottle(0);
    expect(t.shouldFlush(499, 0, 1000)).toBe(false);
    expect(t.shouldFlush(500, 0, 1000)).toBe(true);
    expect(t.shouldFlush(999, 0, 1000)).toBe(false);
    expect(t.shouldFlush(1000, 0, 1000)).toBe(true);
  });

  it('a move of 1% or more is written early, but not within floorMs of the last write', () => {
    const t = new ProgressThrottle(0);
    expect(t.shouldFlush(100, 10, 100)).toBe(true); // 10% after 100 ms
    expect(t.shouldFlush(150, 20, 100)).toBe(false); // +10% but only 50 ms since the last write
    expect(t.shouldFlush(200, 20, 100)).toBe(true); // +10% after 100 ms
    expect(t.shouldFlush(300, 20.9, 100)).toBe(false); // +0.9% is not enough
  });

  it('measures movement from the last written value, not the last offered one', () => {
    const t = new ProgressThrottle(0);
    expect(t.shouldFlush(100, 50, 1000)).toBe(true); // 5%
    expect(t.shouldFlush(220, 55, 1000)).toBe(false); // +0.5%
    expect(t.shouldFlush(340, 62, 1000)).toBe(true); // +1.2% since the last write
  });

  it('does not count backwards movement as progress', () => {
    const t = new ProgressThrottle(0);
    expect(t.shouldFlush(100, 50, 100)).toBe(true);
    expect(t.shouldFlush(300, 10, 100)).toBe(false);
    expect(t.shouldFlush(600, 10, 100)).toBe(true); // the interval still applies
  });

  it('with an unknown total (null or 0) only the interval applies', () => {
    for (const total of [null, 0]) {
      const t = new ProgressThrottle(0);
      expect(t.shouldFlush(200, 1_000_000, total)).toBe(false);
      expect(t.shouldFlush(499, 2_000_000, total)).toBe(false);
      expect(t.shouldFlush(500, 2_000_000, total)).toBe(true);
      expect(t.shouldFlush(900, 3_000_000, total)).toBe(false);
      expect(t.shouldFlush(1_000, 3_000_000, total)).toBe(true);
    }
  });

  it('an unknown-total write does not reset the movement baseline', () => {
    const t = new ProgressThrottle(0);
    expect(t.shouldFlush(100, 10, 100)).toBe(true); // baseline 10%
    expect(t.shouldFlush(600, 5, null)).toBe(true); // interval write, no fraction
    expect(t.shouldFlush(700, 10.5, 100)).toBe(false); // +0.5% over the 10% baseline
    expect(t.shouldFlush(700, 12, 100)).toBe(true); // +2%
  });

  it('a 1,000-item loop at 1 ms per item writes about every 100 ms, not 1,000 times', () => {
    const t = new ProgressThrottle(0);
    const at: number[] = [];
    for (let i = 1; i <= 1000; i++) if (t.shouldFlush(i, i, 1000)) at.push(i);
    expect(at).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
  });

  it('a steady slow job without a total writes every 500 ms', () => {
    const t = new ProgressThrottle(0);
    const at: number[] = [];
    for (let ms = 0; ms <= 3000; ms += 10) if (t.shouldFlush(ms, ms, null)) at.push(ms);
    expect(at).toEqual([500, 1000, 1500, 2000, 2500, 3000]);
  });

  it('honours custom thresholds', () => {
    const t = new ProgressThrottle(0, 1000, 5, 0);
    expect(t.shouldFlush(1, 4, 100)).toBe(false); // 4% < 5%
    expect(t.shouldFlush(2, 5, 100)).toBe(true); // 5%, no floor
    expect(t.shouldFlush(3, 6, 100)).toBe(false);
    expect(t.shouldFlush(1002, 6, 100)).toBe(true); // interval
  });
});
