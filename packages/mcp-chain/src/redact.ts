/** Argument keys whose values never reach a checkpoint, a log line or an approval request. */
export const SECRET_KEY = /token|password|passwd|secret|authorization|cookie|api[-_]?key|private[-_]?key|credential/i;

export const REDACTED = '[redacted]';

/** A copy of `value` with the value of every secret-looking key replaced, at any depth. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) ? REDACTED : redactSecrets(v)]));
  }
  return value;
}
