import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { Db, Principal } from '@stepwise/shared';
import { authenticateApiKey, isTransientInfrastructureError, looksLikeApiKey } from '@stepwise/shared';
import { AuthUnavailableError, InvalidCredentialError } from './auth-errors.js';
import { looksLikeJwt } from './jwt-verifier.js';
import type { VerifiedJwt } from './jwt-verifier.js';

/**
 * The SDK's token-verifier interface over both kinds of bearer token: Stepwise API keys
 * (`sw_…`, checked against `api_keys` on every call, so a revoked key fails at once) and, in JWT
 * mode, access tokens from the configured issuer. The resolved Principal rides in
 * `AuthInfo.extra.principal`, and the SDK hands the AuthInfo to request handlers.
 */
export class StepwiseTokenVerifier implements OAuthTokenVerifier {
  constructor(
    private readonly db: Db,
    private readonly verifyJwt: ((token: string) => Promise<VerifiedJwt>) | undefined,
  ) {}

  /** @throws InvalidCredentialError (a bad token), AuthUnavailableError (cannot check now) */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    if (looksLikeApiKey(token)) {
      let r: Awaited<ReturnType<typeof authenticateApiKey>>;
      try {
        r = await authenticateApiKey(this.db, token);
      } catch (e: unknown) {
        if (isTransientInfrastructureError(e)) throw new AuthUnavailableError('key_store', e);
        throw e;
      }
      if (!r.ok) throw new InvalidCredentialError(`api_key ${r.reason}`);
      return {
        token,
        clientId: r.keyId,
        scopes: [...r.principal.scopes],
        ...(r.expiresAt ? { expiresAt: Math.floor(r.expiresAt.getTime() / 1000) } : {}),
        extra: { principal: r.principal, keyId: r.keyId },
      };
    }
    if (this.verifyJwt && looksLikeJwt(token)) {
      const v = await this.verifyJwt(token);
      return { token, clientId: v.clientId, scopes: [...v.principal.scopes], expiresAt: v.expiresAt, extra: { principal: v.principal } };
    }
    throw new InvalidCredentialError(this.verifyJwt ? 'neither an API key nor a JWT' : 'not an API key');
  }
}

/** The Principal a verified token stands for. */
export function principalOf(info: AuthInfo): Principal {
  const p = info.extra?.principal as Principal | undefined;
  if (!p) throw new Error('AuthInfo carries no principal: it did not come from StepwiseTokenVerifier');
  return p;
}
