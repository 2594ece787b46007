import { createHash } from 'node:crypto';
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import type { Principal } from '@stepwise/shared';
import { knownScopes, PrincipalIdSchema, TenantIdSchema } from '@stepwise/shared';
import { AuthUnavailableError, InvalidCredentialError } from './auth-errors.js';

export interface JwtSettings {
  /** Expected `iss`. Also advertised as the authorization server in the resource metadata. */
  issuer: string;
  /** Expected `aud` (this server's identifier at the issuer). */
  audience: string;
  jwksUrl: string;
  /** The claim naming the caller's tenant. */
  tenantClaim: string;
}

export interface VerifiedJwt {
  principal: Principal;
  /** Seconds since the epoch (`exp`, which is required). */
  expiresAt: number;
  clientId: string;
}

// Asymmetric algorithms only: a JWKS publishes public keys, and accepting HS* would let anyone
// holding a public key forge tokens with a confused verifier.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
// Codes that mean "the JWKS could not be had", as opposed to "this token is bad".
const UNAVAILABLE = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);

/** Three base64url segments, the first a JSON header: worth handing to the JWT verifier. */
export function looksLikeJwt(token: string): boolean {
  return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

function scopesOf(payload: JWTPayload): string[] {
  const raw = payload.scope ?? payload.scp;
  if (typeof raw === 'string') return raw.split(' ').filter(Boolean);
  if (Array.isArray(raw)) return raw.filter((s): s is string => typeof s === 'string');
  return [];
}

/**
 * OAuth resource-server mode: verifies access tokens signed by `issuer` with a key from its
 * JWKS (fetched and cached by jose), for `audience`, not expired. Claims map to a Principal:
 * tenant from `tenantClaim`, principal from `sub`, scopes from `scope` (space-separated),
 * keeping only scopes Stepwise knows.
 * @throws InvalidCredentialError for a token that is not good; AuthUnavailableError when the JWKS cannot be fetched.
 */
export function createJwtVerifier(s: JwtSettings): (token: string) => Promise<VerifiedJwt> {
  const jwks = createRemoteJWKSet(new URL(s.jwksUrl), { timeoutDuration: 5000 });
  return async (token) => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: s.issuer,
        audience: s.audience,
        algorithms: ALGORITHMS,
        requiredClaims: ['exp', 'sub'],
        clockTolerance: 5,
      }));
    } catch (e: unknown) {
      if (e instanceof errors.JOSEError && !UNAVAILABLE.has(e.code)) throw new InvalidCredentialError(`jwt: ${e.code}`);
      throw new AuthUnavailableError('jwks', e);
    }
    const tenant = TenantIdSchema.safeParse(payload[s.tenantClaim]);
    if (!tenant.success) throw new InvalidCredentialError(`jwt: claim "${s.tenantClaim}" missing or not a tenant id`);
    const sub = String(payload.sub);
    // Most subjects are fine as ids; one with spaces or colons (some IdPs use URNs) is hashed.
    const principalId = PrincipalIdSchema.safeParse(sub).success
      ? PrincipalIdSchema.parse(sub)
      : PrincipalIdSchema.parse(`sub_${createHash('sha256').update(sub).digest('hex').slice(0, 32)}`);
    const clientId = typeof payload.client_id === 'string' ? payload.client_id : typeof payload.azp === 'string' ? payload.azp : sub;
    return {
      principal: { tenantId: tenant.data, principalId, scopes: new Set(knownScopes(scopesOf(payload))) },
      expiresAt: payload.exp!,
      clientId,
    };
  };
}
