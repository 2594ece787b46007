import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import type { TenantId } from '../ids.js';

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * DESIGN §5: `sha256(tenant, type, idempotencyKey ?? canonicalJSON(input))`.
 * The parts are length-prefixed so no choice of tenant/type/key can collide with another.
 * The hex digest doubles as the BullMQ jobId (no `:`, fixed length).
 */
export function idempotencyHash(tenantId: TenantId, type: string, input: unknown, idempotencyKey?: string): string {
  const basis = idempotencyKey === undefined ? `input:${canonicalJson(input)}` : `key:${idempotencyKey}`;
  return sha256Hex([tenantId, type, basis].map((p) => `${p.length}:${p}`).join('|'));
}

/** What the request asked for, independent of the key: equal keys with unequal requests conflict. */
export function requestHash(type: string, input: unknown): string {
  return sha256Hex(`${type.length}:${type}|${canonicalJson(input)}`);
}
