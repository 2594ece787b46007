import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  /** Absolute URL of `path` on this server. */
  url(path: string): string;
  /** Requests received carrying this Idempotency-Key. */
  count(idempotencyKey: string): number;
  /** Every request, in arrival order. */
  requests: ReceivedRequest[];
  /** Resolves when a request to `path` (query ignored) arrives. */
  nextRequest(path: string): Promise<ReceivedRequest>;
  /** Times POST /effects applied its effect, per Idempotency-Key. */
  applied(idempotencyKey: string): number;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

/**
 * A real HTTP server on 127.0.0.1 (port 0) for the http.request tests. Routes:
 * - `/json?status=200|201`: JSON echo of method, body and Idempotency-Key, with ETag, Location,
 *   Set-Cookie and X-Internal headers (the last two must not reach a result).
 * - `/text`: text/plain. `/echo`: JSON of the request's method, headers and body.
 * - `/status/<code>?retryAfter=<v>`: that status with a JSON error body (and Retry-After).
 * - `/slow`: never answers. `/reset`: destroys the socket. `/huge?bytes=N`: N bytes of "x".
 *   `/utf8?chars=N`: N × "é" (2 bytes each), as text.
 * - `POST /effects?honour=1`: applies an effect once per key when honour=1, every time otherwise.
 *   `GET /effects/status`: 200 JSON {key, applied} once applied for the request's key, else 404.
 *   `/effects/pending`: 202. `/effects/html`: 200 text/html.
 */
export async function startTestServer(): Promise<TestServer> {
  const requests: ReceivedRequest[] = [];
  const counts = new Map<string, number>();
  const applied = new Map<string, number>();
  const waiters: { path: string; resolve: (r: ReceivedRequest) => void }[] = [];

  const handle = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const u = new URL(req.url ?? '/', 'http://test');
    const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : '';
    const received: ReceivedRequest = { method: req.method ?? '', path: u.pathname, headers: req.headers, body };
    requests.push(received);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (w?.path !== u.pathname) continue;
      waiters.splice(i, 1);
      w.resolve(received);
    }

    const status = /^\/status\/(\d{3})$/.exec(u.pathname);
    if (status) {
      const retryAfter = u.searchParams.get('retryAfter');
      return json(res, Number(status[1]), { error: `answered ${status[1]} on purpose`, detail: 'x'.repeat(1000) }, retryAfter ? { 'retry-after': retryAfter } : {});
    }
    switch (u.pathname) {
      case '/json': {
        const code = Number(u.searchParams.get('status') ?? '200');
        return json(res, code, { ok: true, method: req.method, body, key }, {
          etag: '"v1"',
          'set-cookie': 'session=secret',
          'x-internal': 'yes',
          ...(code === 201 ? { location: '/things/1' } : {}),
        });
      }
      case '/text':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end('hello, world');
      case '/echo':
        return json(res, 200, { method: req.method, headers: req.headers, body });
      case '/slow':
        return; // never answered; the client aborts or close() destroys the socket
      case '/reset':
        return void req.socket.destroy();
      case '/huge': {
        const bytes = Number(u.searchParams.get('bytes') ?? '0');
        res.writeHead(200, { 'content-type': u.searchParams.get('type') ?? 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = bytes;
        const pump = (): void => {
          while (left > 0) {
            const part = chunk.subarray(0, Math.min(chunk.length, left));
            left -= part.length;
            if (!res.write(part)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => (left = 0));
        return pump();
      }
      case '/utf8':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return void res.end('é'.repeat(Number(u.searchParams.get('chars') ?? '0')));
      case '/effects': {
        const honour = u.searchParams.get('honour') === '1';
        if (honour && (applied.get(key) ?? 0) > 0) return json(res, 200, { key, replayed: true });
        applied.set(key, (applied.get(key) ?? 0) + 1);
        return json(res, 201, { key, replayed: false }, { location: `/effects/${encodeURIComponent(key)}` });
      }
      case '/effects/status': {
        const n = applied.get(key) ?? 0;
        return n > 0 ? json(res, 200, { key, applied: n }) : json(res, 404, { error: 'no such request' });
      }
      case '/effects/pending':
        return json(res, 202, { key, state: 'processing' });
      case '/effects/html':
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end('<p>done, probably</p>');
      default:
        return json(res, 404, { error: 'no route' });
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    count: (key) => counts.get(key) ?? 0,
    requests,
    nextRequest: (path) => new Promise((resolve) => waiters.push({ path, resolve })),
    applied: (key) => applied.get(key) ?? 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    },
  };
}
