import { createServer } from 'node:http';
import type { Server } from 'node:http';

/** `/healthz` for orchestrators: 200 while the process serves, 503 once it is draining. */
export function startHealthServer(port: number, host: string, isDraining: () => boolean): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      const draining = isDraining();
      res.writeHead(draining ? 503 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: draining ? 'draining' : 'ok' }));
      return;
    }
    res.writeHead(404).end();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
