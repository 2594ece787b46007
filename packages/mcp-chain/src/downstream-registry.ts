import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, JSONRPCMessage, Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@stepwise/shared';
import { StepwiseError } from '@stepwise/shared';
import type { DownstreamConfig, DownstreamServer } from './downstream-config.js';
import { classifyCallError } from './call-errors.js';

export type RequestId = string | number;

export interface DownstreamRegistryOptions {
  /**
   * Looks up the environment variable named by `auth.bearerTokenEnv` when a connection opens.
   * Apps pass their config module's reader; without one such credentials are reported missing.
   */
  readEnv?: (name: string) => string | undefined;
  log?: Logger | undefined;
  /** How long a tools/list answer is reused for planning (ms). Steps always list afresh. Default 15 s. */
  listToolsTtlMs?: number;
  /** Bound on opening a connection (spawn + initialize, or HTTP initialize), ms. Default 30 s. */
  connectTimeoutMs?: number;
}

export interface CallOptions {
  signal: AbortSignal;
  /** Per-call timeout (ms); the SDK cancels the request (notifications/cancelled) when it passes. */
  timeoutMs: number;
  /** Told the JSON-RPC id of the tools/call request as it is handed to the transport. */
  onRequestId?: (id: RequestId) => void;
  onprogress?: (p: Progress) => void;
}

interface Connection {
  server: string;
  client: Client;
  closed: boolean;
  /** tools/call requests we are waiting to see go out, by the idempotency key in their _meta. */
  awaitingId: Map<string, (id: RequestId) => void>;
}

interface ToolList {
  at: number;
  tools: Tool[];
}

/**
 * The downstream MCP servers named in config, and a pool of SDK clients to them (DESIGN §12).
 * One client per server, shared by every step of this process. A client whose stdio server died
 * or whose connection closed is replaced on the next use (the server is spawned again); an HTTP
 * session the server forgot (404) is opened again; a client whose credential was refused is
 * dropped, so the next connection reads the credential again.
 */
export class DownstreamRegistry {
  readonly #config: DownstreamConfig;
  readonly #readEnv: (name: string) => string | undefined;
  readonly #log: Logger | undefined;
  readonly #ttlMs: number;
  readonly #connectTimeoutMs: number;
  readonly #connections = new Map<string, Promise<Connection>>();
  readonly #tools = new Map<string, ToolList>();
  readonly #listing = new Map<string, Promise<Tool[]>>();
  #closed = false;

  constructor(config: DownstreamConfig, options: DownstreamRegistryOptions = {}) {
    this.#config = config;
    this.#readEnv = options.readEnv ?? (() => undefined);
    this.#log = options.log?.child({ component: 'mcp-downstream' });
    this.#ttlMs = options.listToolsTtlMs ?? 15_000;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 30_000;
  }

  /** Configured server names, sorted. */
  names(): string[] {
    return Object.keys(this.#config.servers).sort();
  }

  has(name: string): boolean {
    return Object.hasOwn(this.#config.servers, name);
  }

  /** @throws StepwiseError `downstream_unknown` (not_found) for a name not in config. */
  server(name: string): DownstreamServer {
    const s = this.has(name) ? this.#config.servers[name] : undefined;
    if (!s) {
      throw new StepwiseError('downstream_unknown', 'not_found', `No MCP server named "${name}" is configured (configured: ${this.names().join(', ') || 'none'}).`);
    }
    return s;
  }

  /**
   * Every tool of a server (all pages of tools/list), reused while younger than `maxAgeMs`
   * (default: the registry TTL; 0 lists afresh). Concurrent callers share one listing.
   * @throws StepwiseError classified like a call (unreachable → transient, 401 → unauthorized).
   */
  async listTools(server: string, opts: { signal?: AbortSignal | undefined; maxAgeMs?: number | undefined } = {}): Promise<Tool[]> {
    const maxAge = opts.maxAgeMs ?? this.#ttlMs;
    const cached = this.#tools.get(server);
    if (cached && Date.now() - cached.at <= maxAge) return cached.tools;
    let listing = this.#listing.get(server);
    if (!listing) {
      listing = this.#listAll(server).finally(() => this.#listing.delete(server));
      this.#listing.set(server, listing);
    }
    return raceSignal(listing, opts.signal);
  }

  /**
   * One tool by name, or undefined when the server does not offer it. A miss in a cached list is
   * checked against a fresh one before it counts.
   */
  async findTool(server: string, tool: string, opts: { signal?: AbortSignal | undefined; maxAgeMs?: number | undefined } = {}): Promise<Tool | undefined> {
    const hit = (await this.listTools(server, opts)).find((t) => t.name === tool);
    if (hit || opts.maxAgeMs === 0) return hit;
    return (await this.listTools(server, { ...opts, maxAgeMs: 0 })).find((t) => t.name === tool);
  }

  /**
   * Calls a tool. Aborting `signal` (or the timeout passing) makes the SDK send
   * `notifications/cancelled` for the request; a reply that arrives after that, or a second
   * reply to the same request id, is dropped by the SDK client (ids are never reused on a
   * connection). A connection found dead before the request went out, or an HTTP session the
   * server no longer knows, is replaced and the call sent once more: neither reached the tool.
   * @throws whatever the transport or SDK throws; classify with classifyCallError.
   */
  async callTool(
    server: string,
    params: { name: string; arguments: Record<string, unknown>; _meta: { idempotencyKey: string } & Record<string, unknown> },
    opts: CallOptions,
  ): Promise<CallToolResult> {
    for (let round = 0; ; round++) {
      const conn = await this.#connection(server, opts.signal);
      let sent = false;
      conn.awaitingId.set(params._meta.idempotencyKey, (id) => {
        sent = true;
        opts.onRequestId?.(id);
      });
      try {
        return (await conn.client.callTool(params, CallToolResultSchema, {
          signal: opts.signal,
          timeout: opts.timeoutMs,
          ...(opts.onprogress ? { onprogress: opts.onprogress, resetTimeoutOnProgress: false } : {}),
        })) as CallToolResult;
      } catch (e: unknown) {
        if (opts.signal.aborted) throw e;
        const c = classifyCallError(e, { server, tool: params.name }, sent);
        if (c.evict) this.evict(server, conn);
        const undelivered = !sent || isNotConnected(e) || isSessionGone(e);
        if (round === 0 && undelivered && c.error.category !== 'unauthorized') {
          this.#log?.info({ server, err: e }, 'downstream connection was stale; reconnected and resent');
          continue;
        }
        throw e;
      } finally {
        conn.awaitingId.delete(params._meta.idempotencyKey);
      }
    }
  }

  /** Drops a server's connection (the one given, or the current one); the next use opens a new one. */
  evict(server: string, conn?: Connection): void {
    const current = this.#connections.get(server);
    if (!current) return;
    void current.then(
      (c) => {
        if (conn && c !== conn) return;
        if (this.#connections.get(server) === current) this.#connections.delete(server);
        this.#tools.delete(server);
        c.closed = true;
        void c.client.close().catch(() => undefined);
      },
      () => undefined,
    );
  }

  /** Closes every connection (stdio servers are stopped). The registry cannot be used afterwards. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.allSettled(all.map(async (p) => (await p).client.close()));
  }

  async #listAll(server: string): Promise<Tool[]> {
    const tools: Tool[] = [];
    for (let round = 0; ; round++) {
      const conn = await this.#connection(server, undefined);
      try {
        let cursor: string | undefined;
        tools.length = 0;
        do {
          const page = await conn.client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.#connectTimeoutMs });
          tools.push(...page.tools);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        // With several pages the SDK keeps output-schema validators for the last page only; the
        // other tools' structuredContent then goes unvalidated by the client, never wrongly rejected.
        this.#tools.set(server, { at: Date.now(), tools: [...tools] });
        return [...tools];
      } catch (e: unknown) {
        const c = classifyCallError(e, { server, tool: 'tools/list' }, true);
        if (c.evict) this.evict(server, conn);
        // Listing is read-only: one more try on a fresh connection is always safe.
        if (round === 0 && c.evict && c.error.category !== 'unauthorized') continue;
        throw c.error;
      }
    }
  }

  async #connection(server: string, signal: AbortSignal | undefined): Promise<Connection> {
    if (this.#closed) throw new StepwiseError('downstream_closed', 'transient', 'The downstream MCP connection pool is shutting down.');
    const existing = this.#connections.get(server);
    if (existing) {
      const conn = await raceSignal(existing, signal).catch(() => undefined);
      signal?.throwIfAborted();
      if (conn && !conn.closed) return conn;
      if (this.#connections.get(server) === existing) this.#connections.delete(server);
    }
    const opening = this.#open(server);
    this.#connections.set(server, opening);
    opening.catch(() => {
      if (this.#connections.get(server) === opening) this.#connections.delete(server);
    });
    return raceSignal(opening, signal);
  }

  async #open(server: string): Promise<Connection> {
    const cfg = this.server(server);
    const client = new Client({ name: 'stepwise', version: '0.1.0' }, { capabilities: {} });
    const transport = this.#transport(server, cfg);
    const conn: Connection = { server, client, closed: false, awaitingId: new Map() };
    // The SDK keeps request ids private; we learn a tools/call's id as it is sent.
    const send = transport.send.bind(transport);
    transport.send = (message: JSONRPCMessage, options) => {
      if ('method' in message && message.method === 'tools/call' && 'id' in message) {
        const key = (message.params?._meta as { idempotencyKey?: unknown } | undefined)?.idempotencyKey;
        if (typeof key === 'string') conn.awaitingId.get(key)?.(message.id);
      }
      return send(message, options);
    };
    client.onclose = () => {
      conn.closed = true;
      this.#tools.delete(server);
      this.#log?.info({ server }, 'downstream connection closed');
    };
    client.onerror = (e: Error) => this.#log?.debug({ server, err: e }, 'downstream transport error');
    try {
      await client.connect(transport, { timeout: this.#connectTimeoutMs });
    } catch (e: unknown) {
      conn.closed = true;
      await client.close().catch(() => undefined);
      throw classifyCallError(e, { server, tool: 'initialize' }, false).error;
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#tools.delete(server);
    });
    this.#log?.info({ server, transport: cfg.stdio ? 'stdio' : 'http', serverInfo: client.getServerVersion() }, 'downstream connected');
    return conn;
  }

  #transport(server: string, cfg: DownstreamServer): Transport {
    if (cfg.stdio) {
      const t = new StdioClientTransport({
        command: cfg.stdio.command,
        args: cfg.stdio.args,
        ...(cfg.stdio.env ? { env: cfg.stdio.env } : {}),
        ...(cfg.stdio.cwd ? { cwd: cfg.stdio.cwd } : {}),
        stderr: 'pipe',
      });
      // A downstream server's stderr is its log: keep it, at debug, tagged with the server.
      const stderr = t.stderr as Readable | null;
      if (stderr) createInterface({ input: stderr }).on('line', (line) => this.#log?.debug({ server, line }, 'downstream stderr'));
      return t;
    }
    const http = cfg.http;
    if (!http) throw new StepwiseError('downstream_misconfigured', 'internal', `MCP server "${server}" has neither stdio nor http.`);
    const headers: Record<string, string> = { ...http.headers };
    const token = this.#credential(server, cfg);
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    return new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers } });
  }

  /** Reads the bearer token now (connect time): rotating the file takes effect on the next connection. */
  #credential(server: string, cfg: DownstreamServer): string | undefined {
    const auth = cfg.auth;
    if (!auth) return undefined;
    let token: string | undefined;
    let from: string;
    if (auth.bearerTokenEnv !== undefined) {
      from = `environment variable ${auth.bearerTokenEnv}`;
      token = this.#readEnv(auth.bearerTokenEnv)?.trim();
    } else {
      from = `file ${auth.bearerTokenFile ?? ''}`;
      try {
        token = readFileSync(auth.bearerTokenFile ?? '', 'utf8').trim();
      } catch {
        token = undefined;
      }
    }
    if (!token) {
      throw new StepwiseError('downstream_credential_missing', 'unauthorized', `The credential for MCP server "${server}" is missing or empty (${from}). Provide it, then answer retry.`, {
        details: { server },
      });
    }
    return token;
  }
}

function isNotConnected(e: unknown): boolean {
  return e instanceof Error && /^Not connected$/.test(e.message);
}

/** A Streamable HTTP server answers 404 to a session id it does not know (restarted, expired). */
function isSessionGone(e: unknown): boolean {
  return e instanceof StreamableHTTPError && e.code === 404;
}

/** Rejects with the signal's reason as soon as it aborts; the work itself carries on for others. */
function raceSignal<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}
