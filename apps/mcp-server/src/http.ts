import type { Server as HttpServer } from 'node:http';
import express from 'express';
import type { Request, Response, NextFunction } from 'express';
import { hostHeaderValidation, localhostHostValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Logger } from '@stepwise/shared';
import type { McpServerDeps } from './mcp-server.js';
import { createMcpServer } from './mcp-server.js';
import type { Readiness } from './readiness.js';
import type { HttpAuthOptions } from './auth/http-auth.js';
import { answerAuthUnavailable, authStateOf, METADATA_PATH, protectedResourceMetadataHandler, requireMcpAuth } from './auth/http-auth.js';

export interface HttpOptions {
  host: string;
  port: number;
  allowedHosts: string[] | undefined;
  bodyLimitBytes: number;
  /** Who may call `/mcp` and as whom (see auth/http-auth.ts). */
  auth: Omit<HttpAuthOptions, 'log'>;
  readiness: () => Promise<Readiness>;
  log: Logger;
}

function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * Streamable HTTP at `/mcp` in stateless mode: each POST gets a fresh server and transport, so any
 * replica can answer any call and nothing about a job lives in a session.
 */
export async function startHttp(deps: McpServerDeps, o: HttpOptions): Promise<HttpServer> {
  const app = express();
  app.disable('x-powered-by');
  // Health routes come before the Host check: orchestrators probe by pod IP, and these routes
  // reveal nothing and run no tools.
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const r = await o.readiness();
    res.status(r.ready ? 200 : 503).json({ status: r.ready ? 'ready' : 'not_ready', checks: r.checks });
  });
  // DNS-rebinding protection (the SDK's middleware): an explicit Host allow-list, or loopback
  // names only when bound to loopback. Our own body parser below carries our size limit.
  if (o.allowedHosts) app.use(hostHeaderValidation(o.allowedHosts));
  else if (['127.0.0.1', 'localhost', '::1'].includes(o.host)) app.use(localhostHostValidation());
  else o.log.warn({ host: o.host }, 'bound beyond loopback without STEPWISE_ALLOWED_HOSTS: Host headers are not checked');

  // RFC 9728 protected resource metadata: where a client learns how to authenticate. Both the
  // root form named in our WWW-Authenticate challenge and the path-suffixed form for /mcp.
  const metadata = protectedResourceMetadataHandler(o.auth);
  app.get(METADATA_PATH, metadata);
  app.get(`${METADATA_PATH}/mcp`, metadata);

  // Authentication runs on every POST, before the body is even parsed.
  const auth = requireMcpAuth({ ...o.auth, log: o.log });
  app.post('/mcp', auth, express.json({ limit: o.bodyLimitBytes, strict: true }), async (req: Request, res: Response) => {
    const state = authStateOf(req);
    if (state.kind === 'unavailable') return answerAuthUnavailable(req, res, state.error);
    // JSON-RPC 2.0 §6: an empty batch is an Invalid Request (the transport would answer 202).
    if (Array.isArray(req.body) && req.body.length === 0) return jsonRpcError(res, 400, -32600, 'Invalid Request: the batch is empty.');
    // One server per request, bound to this request's principal.
    const server = createMcpServer(deps, state.principal);
    // No sessionIdGenerator: stateless mode.
    const transport = new StreamableHTTPServerTransport({});
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (e: unknown) {
      o.log.error({ err: e }, 'mcp request failed');
      if (!res.headersSent) jsonRpcError(res, 500, -32603, 'Internal server error');
    }
  });
  const methodNotAllowed = (_req: Request, res: Response) => {
    res.setHeader('Allow', 'POST');
    jsonRpcError(res, 405, -32000, 'Method not allowed: this server is stateless; POST JSON-RPC to /mcp.');
  };
  app.get('/mcp', methodNotAllowed);
  app.delete('/mcp', methodNotAllowed);

  // Body parser failures (too large, malformed JSON) become JSON-RPC errors, not HTML pages.
  app.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    const status = (err as { status?: number }).status ?? 500;
    if (status === 413) return jsonRpcError(res, 413, -32600, `Request body exceeds ${o.bodyLimitBytes} bytes.`);
    if (status === 400) return jsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON.');
    o.log.error({ err }, 'http error');
    return jsonRpcError(res, 500, -32603, 'Internal server error');
  });

  return new Promise((resolve, reject) => {
    const server = app.listen(o.port, o.host, () => resolve(server));
    server.once('error', reject);
    // Clients time out around 60 s; our longest call (a 25 s wait) ends well before this.
    server.requestTimeout = 60_000;
    server.headersTimeout = 15_000;
  });
}
