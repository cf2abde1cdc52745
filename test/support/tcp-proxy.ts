/**
 * A TCP proxy between the clients of a test and its PostgreSQL, which cuts connections on command:
 * what a network blip, a failover or a restarted server looks like from the client (the driver's
 * `Connection terminated unexpectedly`, `ECONNRESET`, a refused connect).
 *
 * It can also freeze connections (a network that drops packets, a half-open connection):
 * `freeze()` stops forwarding both ways on every open connection (or on the one the server sees
 * coming from a port) without closing either side, and a frozen connection's client hears nothing
 * more, not even the server's side closing, until the proxy cuts it or the client closes it.
 * `freezeAll()` freezes the new connections too (a server that stops answering: a connect never
 * completes its start-up), until `thaw()`.
 *
 * @example
 * ```ts
 * const proxy = await startTcpProxy(server.connectionString);
 * const journal = new PostgresRunJournal({ connectionString: proxy.connectionString });
 * proxy.cut();              // every open connection reset
 * proxy.refuse(500);        // and new ones refused for 500 ms
 * proxy.freeze();           // every open connection silent, none closed
 * proxy.freezeAll();        // and every new one, until proxy.thaw()
 * await proxy.close();
 * ```
 */
import { createServer, connect, type Socket } from 'node:net';

/** A running proxy (see the module comment). */
export interface TcpProxy {
  /** The target's connection string with host and port replaced by the proxy's. */
  readonly connectionString: string;
  /** Resets every open connection (both sides, frozen ones too), now. */
  cut(): void;
  /** New connections are reset at once for `ms` (a server that is down). */
  refuse(ms: number): void;
  /**
   * Stops forwarding, both ways, on every open connection, or on the one whose proxy-to-server side
   * comes from `upstreamPort` (the `client_port` the server shows for it), closing neither side: the
   * client's socket stays open and silent even once the server closes its side (a half-open
   * connection), until `cut()`, `close()` or the client ends it. New connections are forwarded as
   * usual. Says whether a connection was frozen.
   */
  freeze(upstreamPort?: number): boolean;
  /** {@link freeze}s every open connection and every new one until {@link thaw} (a server that stops answering). */
  freezeAll(): void;
  /** New connections are forwarded again; those frozen stay frozen until `cut()`, `close()` or their client ends them. */
  thaw(): void;
  /** Connections accepted and cut so far. */
  readonly stats: { accepted: number; cut: number; refused: number };
  /** Cuts everything and stops listening. */
  close(): Promise<void>;
}

/** One connection through the proxy: the client's socket and the proxy's to the server. */
interface Pair {
  client: Socket;
  upstream: Socket;
  /** Forwarding stopped: the client is not told when the server's side closes. */
  frozen: boolean;
}

/** Starts a proxy on 127.0.0.1 (a free port) to the host and port of `connectionString`. */
export async function startTcpProxy(connectionString: string): Promise<TcpProxy> {
  const target = new URL(connectionString);
  const targetPort = Number(target.port || 5432);
  const targetHost = target.hostname;
  const pairs = new Set<Pair>();
  const stats = { accepted: 0, cut: 0, refused: 0 };
  let refuseUntil = 0;
  /** New connections are frozen as they are made (`freezeAll()` until `thaw()`). */
  let freezingNew = false;

  /** Stops forwarding on `pair` (see {@link TcpProxy.freeze}). */
  const freezePair = (pair: Pair): void => {
    pair.frozen = true;
    pair.client.unpipe(pair.upstream);
    pair.upstream.unpipe(pair.client);
    pair.client.pause();
    pair.upstream.pause();
  };

  const server = createServer((client) => {
    if (Date.now() < refuseUntil) {
      stats.refused += 1;
      client.resetAndDestroy();
      return;
    }
    stats.accepted += 1;
    const upstream = connect(targetPort, targetHost);
    const pair: Pair = { client, upstream, frozen: false };
    pairs.add(pair);
    const drop = (): void => {
      upstream.destroy();
      // frozen: the client hears nothing of the server's side closing
      if (pair.frozen) return;
      pairs.delete(pair);
      client.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', () => {
      pair.frozen = false;
      drop();
    });
    upstream.on('close', drop);
    if (freezingNew) {
      freezePair(pair);
      return;
    }
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
      pair.frozen = false;
      stats.cut += 1;
      pair.client.resetAndDestroy();
      pair.upstream.resetAndDestroy();
    }
  };
  return {
    connectionString: proxied.toString(),
    cut,
    refuse(ms) {
      refuseUntil = Date.now() + ms;
    },
    freeze(upstreamPort) {
      let frozen = false;
      for (const pair of pairs) {
        if (pair.frozen || (upstreamPort !== undefined && pair.upstream.localPort !== upstreamPort)) continue;
        freezePair(pair);
        frozen = true;
      }
      return frozen;
    },
    freezeAll() {
      freezingNew = true;
      for (const pair of pairs) if (!pair.frozen) freezePair(pair);
    },
    thaw() {
      freezingNew = false;
    },
    stats,
    async close() {
      cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
