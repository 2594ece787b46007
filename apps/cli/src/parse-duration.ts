import { CliError } from './cli-error.js';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 } as const;
/** Longer than this is "forever" in practice: leave the expiry out instead. */
const MAX_MS = 5 * 366 * 86_400_000;

/** `90s`, `15m`, `12h`, `30d`, `8w` → milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d{1,6})([smhdw])$/.exec(text.trim());
  if (!m) throw new CliError(`"${text}" is not a duration: use a number and a unit (s, m, h, d, w), e.g. 30d`);
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  if (ms <= 0) throw new CliError(`--expires-in must be more than zero (got "${text}")`);
  if (ms > MAX_MS) throw new CliError(`--expires-in is at most 5 years (got "${text}"); omit it for a key that does not expire`);
  return ms;
}
