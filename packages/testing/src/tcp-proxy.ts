import { createServer, connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones until `restore()`: the service is "unreachable". */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

/**
 * A loopback TCP proxy in front of a real service (e.g. Postgres), for failure tests: cutting it is
 * a real network failure as the client sees it (reset connections, refused reconnects), while the
 * service itself keeps running for everyone else on the machine.
 */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let down = false;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      down = true;
      for (const s of open) s.destroy();
      open.clear();
    },
    restore() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
