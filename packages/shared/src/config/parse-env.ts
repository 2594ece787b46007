import type { z } from 'zod';

/**
 * Parses the environment with `schema`. On failure prints every problem (not just the first)
 * with the variable name and why, then exits 1: a half-configured process must not start.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>, app: string): z.output<S> {
  // `FOO=` (set but empty) means "not set": otherwise z.coerce.number() would read it as 0.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
  process.stderr.write(`${app}: invalid configuration:\n${lines.join('\n')}\n`);
  process.exit(1);
}
