/**
 * A TCP proxy between the clients of a test and its PostgreSQL, which cuts connections on command:
 * what a network blip, a failover or a restarted server looks like from the client (the driver's
 * `Connection terminated unexpectedly`, `ECONNRESET`, a refused connect).
 *
 * @example
 * ```ts
 * const proxy = await startTcpProxy(server.connectionString);
 * const journal = new PostgresRunJournal({ connectionString: proxy.connectionString });
 * proxy.cut();              // every open connection reset
 * proxy.refuse(500);        // and new ones refused for 500 ms
 * await proxy.close();
 * ```
 */
import { createServer, connect, type Socket } from 'node:net';

/** A running proxy (see the module comment). */
export interface TcpProxy {
  /** The target's connection string with host and port replaced by the proxy's. */
  readonly connectionString: string;
  /** Resets every open connection (both sides), now. */
  cut(): void;
  /** New connections are reset at once for `ms` (a server that is down). */
  refuse(ms: number): void;
  /** Connections accepted and cut so far. */
  readonly stats: { accepted: number; cut: number; refused: number };
  /** Cuts everything and stops listening. */
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 (a free port) to the host and port of `connectionString`. */
export async function startTcpProxy(connectionString: string): Promise<TcpProxy> {
  const target = new URL(connectionString);
  const targetPort = Number(target.port || 5432);
  const targetHost = target.hostname;
  const pairs = new Set<[Socket, Socket]>();
  const stats = { accepted: 0, cut: 0, refused: 0 };
  let refuseUntil = 0;

  const server = createServer((client) => {
    if (Date.now() < refuseUntil) {
      stats.refused += 1;
      client.resetAndDestroy();
      return;
    }
    stats.accepted += 1;
    const upstream = connect(targetPort, targetHost);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('tcp proxy: no port');
  const proxied = new URL(connectionString);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(address.port);

  const cut = (): void => {
    for (const pair of [...pairs]) {
      pairs.delete(pair);
      stats.cut += 1;
      pair[0].resetAndDestroy();
      pair[1].resetAndDestroy();
    }
  };
  return {
    connectionString: proxied.toString(),
    cut,
    refuse(ms) {
      refuseUntil = Date.now() + ms;
    },
    stats,
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
