import type { Request, RequestHandler, Response } from 'express';
import type { OAuthTokenVerifier } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Logger, Principal, StepwiseError } from '@stepwise/shared';
import { newRequestId, SCOPES } from '@stepwise/shared';
import { toToolError } from '../to-tool-result.js';
import { AuthUnavailableError, InvalidCredentialError } from './auth-errors.js';
import { principalOf } from './token-verifier.js';

// Why not the SDK's requireBearerAuth: it answers with an OAuth error body rather than a
// JSON-RPC one, adds error="invalid_token" even when no token was sent (RFC 6750 §3.1 says a
// bare challenge), refuses tokens without an expiry (API keys may have none), and turns a store
// outage into a 500. We keep its contract instead: an OAuthTokenVerifier, and `req.auth` set to
// the AuthInfo, which the SDK's transport passes to request handlers as `extra.authInfo`.

export const METADATA_PATH = '/.well-known/oauth-protected-resource';

export interface HttpAuthOptions {
  /** `none` trusts every caller as `localPrincipal` (loopback only; config enforces it). */
  mode: 'api_key' | 'none';
  localPrincipal: Principal;
  verifier: OAuthTokenVerifier;
  /** JWT mode: the issuer, advertised as the authorization server. */
  jwtIssuer: string | undefined;
  /** The externally visible base URL; derived from the request when unset. */
  publicUrl: string | undefined;
  log: Logger;
}

/** What the middleware decided for one request. */
export type AuthState = { kind: 'ok'; principal: Principal } | { kind: 'unavailable'; error: StepwiseError };

const states = new WeakMap<Request, AuthState>();

/** The middleware's decision for `req`; only requests that passed `requireMcpAuth` have one. */
export function authStateOf(req: Request): AuthState {
  const s = states.get(req);
  if (!s) throw new Error('requireMcpAuth did not run for this request');
  return s;
}

/** `https://host[/prefix]` as clients see this server. */
export function baseUrlOf(req: Request, publicUrl: string | undefined): string {
  return (publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`).replace(/\/+$/, '');
}

/** RFC 9728 protected resource metadata for the `/mcp` endpoint. */
export function protectedResourceMetadata(base: string, jwtIssuer: string | undefined): OAuthProtectedResourceMetadata {
  return {
    resource: `${base}/mcp`,
    ...(jwtIssuer ? { authorization_servers: [jwtIssuer] } : {}),
    bearer_methods_supported: ['header'],
    scopes_supported: [...SCOPES],
    resource_name: 'Stepwise durable jobs',
  };
}

/** GET handler for the metadata document (public, CORS-open: browser clients discover auth with it). */
export function protectedResourceMetadataHandler(o: Pick<HttpAuthOptions, 'jwtIssuer' | 'publicUrl'>): RequestHandler {
  return (req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(protectedResourceMetadata(baseUrlOf(req, o.publicUrl), o.jwtIssuer));
  };
}

const quoted = (s: string) => s.replace(/["\\]/g, '');

function refuse(req: Request, res: Response, o: HttpAuthOptions, tokenSent: boolean): void {
  const metadata = `${baseUrlOf(req, o.publicUrl)}${METADATA_PATH}`;
  const challenge = tokenSent
    ? `Bearer error="invalid_token", error_description="The bearer token is invalid, expired or revoked", resource_metadata="${quoted(metadata)}"`
    : `Bearer resource_metadata="${quoted(metadata)}"`;
  res.setHeader('WWW-Authenticate', challenge);
  res.status(401).json({
    jsonrpc: '2.0',
    error: {
      code: -32001,
      message: tokenSent
        ? 'Unauthorized: the bearer token is invalid, expired or revoked.'
        : 'Unauthorized: send "Authorization: Bearer <API key or access token>" (create a key with `stepwise keys create`).',
    },
    id: null,
  });
}

/**
 * Authenticates every request to `/mcp` (the server is stateless, so a key revoked mid-session
 * fails on the very next call). Missing, unknown, revoked or expired credentials get 401 with a
 * `WWW-Authenticate` challenge pointing at the resource metadata. When the credential cannot be
 * checked right now (store or JWKS down), the request goes on marked `unavailable`, so the route
 * can answer a tool call with a retryable tool error instead of a bare HTTP failure.
 */
export function requireMcpAuth(o: HttpAuthOptions): RequestHandler {
  return async (req, res, next) => {
    if (o.mode === 'none') {
      states.set(req, { kind: 'ok', principal: o.localPrincipal });
      return next();
    }
    const header = req.headers.authorization ?? '';
    const m = /^Bearer[ ]+(\S*)\s*$/i.exec(header);
    if (!m) return refuse(req, res, o, false);
    const token = m[1] ?? '';
    if (!token) return refuse(req, res, o, true);
    try {
      const info = await o.verifier.verifyAccessToken(token);
      (req as Request & { auth?: AuthInfo }).auth = info;
      states.set(req, { kind: 'ok', principal: principalOf(info) });
      return next();
    } catch (e: unknown) {
      if (e instanceof InvalidCredentialError) {
        // 401s are logged, not written to audit_events: with no principal there is no tenant to
        // file them under (the table is queried per tenant), and anyone who reaches the port
        // could grow the table without limit. Denied calls of known principals ARE audited.
        o.log.info({ reason: e.reason, ip: req.ip }, 'request refused: invalid credential');
        return refuse(req, res, o, true);
      }
      if (e instanceof AuthUnavailableError) {
        o.log.warn({ err: e.cause, code: e.code }, 'credential check unavailable');
        states.set(req, { kind: 'unavailable', error: e });
        return next();
      }
      return next(e);
    }
  };
}

/**
 * The answer to a request whose credential could not be checked: a `tools/call` gets its
 * ordinary retryable tool error (what an assistant knows how to handle); anything else 503.
 */
export function answerAuthUnavailable(req: Request, res: Response, error: StepwiseError): void {
  const body = req.body as { jsonrpc?: unknown; method?: unknown; id?: unknown } | undefined;
  const id = body && typeof body === 'object' && !Array.isArray(body) ? body.id : undefined;
  if (body?.method === 'tools/call' && (typeof id === 'string' || typeof id === 'number')) {
    res.status(200).json({ jsonrpc: '2.0', id, result: toToolError(error, newRequestId()) });
    return;
  }
  res.setHeader('Retry-After', String(Math.ceil((error.retryAfterMs ?? 1000) / 1000)));
  res.status(503).json({ jsonrpc: '2.0', error: { code: -32000, message: error.message }, id: null });
}
