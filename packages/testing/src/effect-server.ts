import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EffectRecord {
  /** Every request that reached the server with this key. */
  calls: number;
  /** How many times the effect actually took place: once per key when deduplicating, else per call. */
  applied: number;
}

export interface EffectServer {
  /** POST `${url}` with an `Idempotency-Key` header performs the effect; GET `${url}/<key>` reads it. */
  url: string;
  get(key: string): EffectRecord;
  /** All keys seen, with their records. */
  all(): Map<string, EffectRecord>;
  close(): Promise<void>;
}

/**
 * A real external system for side-effect tests: an HTTP endpoint on loopback that counts calls per
 * idempotency key. With `dedupe` it honours keys (a repeated key does not apply again), like a
 * payment API; without, every call applies, like an API that cannot deduplicate.
 */
export async function startEffectServer(options: { dedupe: boolean } = { dedupe: true }): Promise<EffectServer> {
  const records = new Map<string, EffectRecord>();
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (req.method === 'GET') {
      const key = decodeURIComponent(path.replace(/^\/effects\/?/, ''));
      const r = records.get(key);
      res.writeHead(r ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(r ?? { calls: 0, applied: 0 }));
      return;
    }
    // Drain the body; the key is all that matters here.
    req.resume();
    req.on('end', () => {
      const key = String(req.headers['idempotency-key'] ?? '');
      if (!key) {
        res.writeHead(400).end('missing Idempotency-Key');
        return;
      }
      const r = records.get(key) ?? { calls: 0, applied: 0 };
      r.calls++;
      const apply = !options.dedupe || r.applied === 0;
      if (apply) r.applied++;
      records.set(key, r);
      res.writeHead(apply ? 201 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ key, appliedNow: apply, calls: r.calls, applied: r.applied }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/effects`,
    get: (key) => records.get(key) ?? { calls: 0, applied: 0 },
    all: () => new Map(records),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
