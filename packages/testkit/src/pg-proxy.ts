import net, { type Socket } from "node:net";
import { listenOn, relistenOn } from "./listen-on.js";

export interface TcpProxyOptions {
  /** Upstream host, e.g. "127.0.0.1". */
  host: string;
  /** Upstream port, e.g. 5432. */
  port: number;
  /** Listening port. Default 0 (ephemeral). */
  listenPort?: number;
  /** Listening host. Default "127.0.0.1". */
  listenHost?: string;
}

export interface TcpProxyStats {
  /** Connections accepted and piped upstream. */
  connections: number;
  /** Connections destroyed by `cutAll`. */
  cut: number;
  /** Connections open right now. */
  open: number;
}

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  readonly stats: TcpProxyStats;
  /** The same connection string pointed at the proxy (host and port replaced). */
  rewriteUrl(connectionString: string): string;
  /** Destroys every open connection, both sides, at once (a network cut mid-transaction). */
  cutAll(): number;
  /**
   * `true`: stop listening (new connections are refused; open ones are left alone — combine
   * with `cutAll` for a full outage). `false`: listen again on the same port.
   */
  refuse(on: boolean): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP proxy for Postgres (or anything): pipes bytes, and cuts or refuses on demand.
 *
 * @example
 * const pgProxy = await startTcpProxy({ host: "127.0.0.1", port: 5432 });
 * const db = createDb({ connectionString: pgProxy.rewriteUrl(ctx.databaseUrl) });
 * pgProxy.cutAll();            // every open connection dies mid-whatever
 * await pgProxy.refuse(true);  // and new ones are refused until refuse(false)
 */
export async function startTcpProxy(opts: TcpProxyOptions): Promise<TcpProxy> {
  const listenHost = opts.listenHost ?? "127.0.0.1";
  const pairs = new Set<[Socket, Socket]>();
  const stats: TcpProxyStats = { connections: 0, cut: 0, open: 0 };
  let closed = false;

  const server = net.createServer((client) => {
    const upstream = net.connect({ host: opts.host, port: opts.port });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    stats.connections += 1;
    stats.open = pairs.size;
    const end = () => {
      if (!pairs.delete(pair)) return;
      stats.open = pairs.size;
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  });

  const listen = (port: number) => listenOn(server, port, listenHost);
  const port = await listen(opts.listenPort ?? 0);
  let listening = true;

  const proxy: TcpProxy = {
    host: listenHost,
    port,
    stats,
    rewriteUrl(connectionString) {
      const u = new URL(connectionString);
      u.hostname = listenHost;
      u.port = String(port);
      return u.toString();
    },
    cutAll() {
      let n = 0;
      for (const [client, upstream] of [...pairs]) {
        // resetAndDestroy sends an RST: the far side learns at once, not on its next write.
        client.resetAndDestroy();
        upstream.resetAndDestroy();
        n += 1;
      }
      pairs.clear();
      stats.cut += n;
      stats.open = 0;
      return n;
    },
    async refuse(on) {
      if (on && listening) {
        listening = false;
        server.close();
      } else if (!on && !listening && !closed) {
        await relistenOn(server, port, listenHost);
        listening = true;
      }
    },
    async close() {
      closed = true;
      proxy.cutAll();
      if (listening) await new Promise<void>((r) => server.close(() => r()));
      listening = false;
    },
  };
  return proxy;
}
