import { describe, it, expect } from 'vitest';
import { parseDuration } from './parse-duration.js';
import { CliError } from './cli-error.js';

describe('parseDuration', () => {
  it('reads a number and a unit', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('12h')).toBe(43_200_000);
    expect(parseDuration('30d')).toBe(30 * 86_400_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
  });

  it('refuses anything else with a message that says how to write it', () => {
    for (const bad of ['', '30', 'd', '1.5d', '-1d', '30 days', '0d', '9999w']) {
      expect(() => parseDuration(bad)).toThrow(CliError);
    }
    expect(() => parseDuration('30x')).toThrow(/e\.g\. 30d/);
  });
});
