import { z } from 'zod';
import type { Brand, PrincipalId } from '../ids.js';
import { newRequestId } from '../ids.js';

export type ApiKeyId = Brand<string, 'ApiKeyId'>;

const BODY = '[0-9a-hjkmnp-tv-z]{26}';

// Same ULID-shaped body as every other id (ids.ts): sortable by creation, 80 random bits.
// Borrowed from a request id so there is one generator, not two.
const ulidBody = (): string => newRequestId().slice('req_'.length);

/** `key_` + 26 base32 chars: the stable id of an API key (not secret; the token is). */
export const ApiKeyIdSchema = z
  .string()
  .regex(new RegExp(`^key_${BODY}$`), 'an API key id looks like key_ followed by 26 letters and digits')
  .transform((s) => s as ApiKeyId);

export function newApiKeyId(): ApiKeyId {
  return `key_${ulidBody()}` as ApiKeyId;
}

/** `prn_` + 26 base32 chars: the id of a principal stored in `principals`. */
export function newPrincipalId(): PrincipalId {
  return `prn_${ulidBody()}` as PrincipalId;
}

/** For trusted sources only (our own rows). */
export const unsafeApiKeyId = (s: string): ApiKeyId => s as ApiKeyId;
