import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/** Paths pino blanks in every log line: job data and credentials never reach logs by default. */
export const REDACT_PATHS = [
  'input',
  'output',
  'result',
  'arguments',
  '*.input',
  '*.output',
  '*.arguments',
  'authorization',
  'headers.authorization',
  '*.authorization',
  'token',
  '*.token',
  'password',
  '*.password',
  'apiKey',
  '*.apiKey',
  'secret',
  '*.secret',
];

export interface LoggerOptions {
  name: string;
  level?: string;
  /** 2 = stderr. The stdio MCP transport owns stdout, so a stdio server must log to stderr. */
  fd?: 1 | 2;
}

/** The one logger factory. Bind `{ jobId, step, attempt, workerId, requestId }` with `.child()`. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    pino.destination({ fd: options.fd ?? 1, sync: false }),
  );
}
