import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { TransientError } from '@stepwise/shared';

/**
 * The credential is not good: missing from the verifier's point of view, malformed, unknown,
 * revoked, expired, or signed for someone else. `reason` is for our logs only; the caller gets
 * one uniform 401 so that probing keys teaches nothing. An SDK InvalidTokenError, as the
 * OAuthTokenVerifier contract expects.
 */
export class InvalidCredentialError extends InvalidTokenError {
  constructor(readonly reason: string) {
    super(`invalid credential: ${reason}`);
    this.name = 'InvalidCredentialError';
  }
}

/** The credential could not be checked right now (the key store or the issuer's JWKS is unreachable). */
export class AuthUnavailableError extends TransientError {
  constructor(what: 'key_store' | 'jwks', cause: unknown) {
    super(
      what === 'key_store'
        ? 'Credentials cannot be checked right now (the key store is unreachable); nothing was done. Retry shortly.'
        : "Access tokens cannot be checked right now (the issuer's signing keys could not be fetched); nothing was done. Retry shortly.",
      { cause, retryAfterMs: 1000, details: { service: what } },
      what === 'key_store' ? 'postgres_unavailable' : 'jwks_unavailable',
    );
  }
}
