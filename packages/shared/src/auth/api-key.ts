import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

// Token format: `sw_<prefix>_<secret>`.
// - prefix: 12 Crockford base32 chars (60 random bits). Public: it is how the key is found
//   (unique index) and how operators name it in `stepwise keys revoke`.
// - secret: 32 base62 chars (~190 random bits). Only sha256(secret) is stored. A slow hash
//   (bcrypt, scrypt) protects low-entropy passwords; against 190 random bits a fast hash is as
//   strong and keeps per-request authentication cheap.

const PREFIX_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const SECRET_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_PREFIX_LENGTH = 12;
export const API_KEY_SECRET_LENGTH = 32;
const TOKEN = /^sw_([0-9a-hjkmnp-tv-z]{12})_([0-9A-Za-z]{32})$/;
/** A key prefix as typed by an operator (`stepwise keys revoke <prefix>`). */
export const API_KEY_PREFIX_PATTERN = /^[0-9a-hjkmnp-tv-z]{12}$/;

function randomString(alphabet: string, length: number): string {
  // randomInt draws without modulo bias.
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export interface GeneratedApiKey {
  /** The full bearer token. Shown to the operator once, never stored. */
  token: string;
  prefix: string;
  /** sha256 of the secret part, lower-case hex: what `api_keys.hash` holds. */
  hash: string;
}

/** Mints a new key. The token is the only copy of the secret: hand it out once, then drop it. */
export function generateApiKey(): GeneratedApiKey {
  // 60 bits of prefix are plenty for a lookup id; a collision fails the insert (unique index).
  const prefix = randomString(PREFIX_ALPHABET, API_KEY_PREFIX_LENGTH);
  const secret = randomString(SECRET_ALPHABET, API_KEY_SECRET_LENGTH);
  return { token: `sw_${prefix}_${secret}`, prefix, hash: hashApiKeySecret(secret) };
}

/** The parts of a well-formed token, or null when it is not an API key at all. */
export function parseApiKey(token: string): { prefix: string; secret: string } | null {
  const m = TOKEN.exec(token);
  return m ? { prefix: m[1]!, secret: m[2]! } : null;
}

/** True when `token` has the shape of a Stepwise API key (says nothing about validity). */
export function looksLikeApiKey(token: string): boolean {
  return TOKEN.test(token);
}

/** sha256(secret) as lower-case hex. */
export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * Constant-time check of a presented secret against a stored hash. Comparing digests (fixed
 * length) with timingSafeEqual leaks nothing about how many characters matched.
 */
export function verifyApiKeySecret(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKeySecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  if (stored.length !== presented.length) return false;
  return timingSafeEqual(presented, stored);
}
