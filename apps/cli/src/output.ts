// The CLI's output goes through here (the linter bans console; stdout is for results,
// stderr for errors and notes, so `--json` output can be piped).

export function out(text = ''): void {
  process.stdout.write(`${text}\n`);
}

export function err(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** A database URL without its password, for messages. */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}
