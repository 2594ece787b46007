/** A failure the operator can fix (bad arguments, unknown key, unmigrated database): printed as is, exit 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}
