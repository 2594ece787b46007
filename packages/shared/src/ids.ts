import { randomBytes } from 'node:crypto';
import { z } from 'zod';

declare const brand: unique symbol;
/** A nominal type: a string that was parsed or minted as a particular kind of id. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type JobId = Brand<string, 'JobId'>;
export type TenantId = Brand<string, 'TenantId'>;
export type PrincipalId = Brand<string, 'PrincipalId'>;
export type RequestId = Brand<string, 'RequestId'>;
export type WorkerId = Brand<string, 'WorkerId'>;

// Crockford base32, lower-case: no i, l, o, u, so ids survive being read aloud or retyped.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/**
 * A ULID-shaped body: 48 bits of milliseconds then 80 random bits, 26 characters.
 * Time first makes ids sort by creation (cheap keyset pagination); 80 random bits
 * make them unguessable, which matters because a job id is a capability to read it.
 */
function ulidBody(now = Date.now()): string {
  const bytes = new Uint8Array(16);
  let t = now;
  for (let i = 5; i >= 0; i--) {
    bytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  bytes.set(randomBytes(10), 6);
  // 128 bits need 26 base32 chars (130 bits); the last char carries two bits of zero padding.
  return base32(bytes).slice(0, 26);
}

const BODY = '[0-9a-hjkmnp-tv-z]{26}';

/** `job_` + 26 base32 chars. Never contains `:` (BullMQ rejects it in ids). */
export const JobIdSchema = z
  .string()
  .regex(new RegExp(`^job_${BODY}$`), 'a job id looks like job_ followed by 26 letters and digits')
  .transform((s) => s as JobId);

export function newJobId(now?: number): JobId {
  return `job_${ulidBody(now)}` as JobId;
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Tenants are named by operators; lower-case slugs keep them safe in keys and channels. */
export const TenantIdSchema = z
  .string()
  .regex(NAME, 'a tenant id is 1-64 lower-case letters, digits, dot, dash or underscore')
  .transform((s) => s as TenantId);

export const PrincipalIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[^\s:]+$/, 'a principal id has no spaces or colons')
  .transform((s) => s as PrincipalId);

export function newRequestId(): RequestId {
  return `req_${ulidBody()}` as RequestId;
}

export function newWorkerId(hostname: string, pid: number): WorkerId {
  return `wrk_${hostname.replace(/[^a-zA-Z0-9-]/g, '')}_${pid}_${base32(randomBytes(4))}` as WorkerId;
}

/** For trusted sources only (our own database rows); input from outside goes through the schemas. */
export const unsafeCast = {
  jobId: (s: string) => s as JobId,
  tenantId: (s: string) => s as TenantId,
  principalId: (s: string) => s as PrincipalId,
  workerId: (s: string) => s as WorkerId,
};
