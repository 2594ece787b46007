import { randomBytes } from 'node:crypto';

/** A Redis key prefix no other test file uses, so queues never see each other's jobs. */
export function uniquePrefix(label: string): string {
  return `t-${label.replace(/[^a-zA-Z0-9]/g, '').slice(0, 20)}-${randomBytes(4).toString('hex')}`;
}
