import http from "node:http";
import type { Socket } from "node:net";
import { gunzipSync } from "node:zlib";
import { injectedError, isBulk, itemRecords, mergeItems, parseBulk, pickDrops } from "./fault-proxy-bulk.js";
import { emptyStats, normalize, type FaultMode, type FaultModeName, type FaultProxyStats } from "./fault-mode.js";
export type { FaultMode, FaultModeName, FaultProxyStats } from "./fault-mode.js";
import { listenOn, relistenOn } from "./listen-on.js";

/** One `_bulk` item as it went through the proxy (forwarded items only). */
export interface BulkItemRecord {
  action: string;
  index: string | undefined;
  id: string;
  version: number | undefined;
  versionType: string | undefined;
  /** HTTP status of the item in Elasticsearch's response. */
  status: number;
}

/** A forwarded `_bulk` request: when it left the proxy and when its answer came back. */
export interface BulkExchange {
  sentAt: number;
  receivedAt: number;
  /** Size of the request body as the client sent it (before any decompression), in bytes. */
  bytes: number;
  items: BulkItemRecord[];
}

export interface FaultProxyOptions {
  /** Upstream base URL, e.g. "http://127.0.0.1:9200". */
  target: string;
  /** Listening port. Default 0 (ephemeral). */
  port?: number;
  /** Listening host. Default "127.0.0.1". */
  host?: string;
  /** Random source for item dropping (tests may seed it). Default Math.random. */
  random?: () => number;
}

export interface FaultProxy {
  /** Base URL of the proxy, e.g. "http://127.0.0.1:41234". */
  readonly url: string;
  readonly port: number;
  readonly stats: FaultProxyStats;
  readonly mode: FaultMode;
  /** Switches the mode for requests arriving from now on; resolves once it is in effect. */
  setMode(mode: FaultMode | FaultModeName): Promise<void>;
  /** Shorthand for `setMode({ kind: "dropBulkItems", fraction, forge })`. */
  dropBulkItems(fraction: number, opts?: { forge?: boolean }): Promise<void>;
  /** Sees every forwarded `_bulk` exchange (forces buffering of bulk requests). Returns an unsubscribe. */
  observeBulk(listener: (exchange: BulkExchange) => void): () => void;
  resetStats(): void;
  /** Destroys every connection (hung ones included) and stops listening. */
  close(): Promise<void>;
}

const ES_HEADERS = { "content-type": "application/json", "x-elastic-product": "Elasticsearch" };
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection", "proxy-authorization"]);

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function errorBody(status: number): string {
  const error = injectedError(status);
  return JSON.stringify({ error: { root_cause: [error], ...error }, status });
}

interface Upstream {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Starts a fault-injecting HTTP proxy. No dependencies: node:http only.
 *
 * @example
 * const proxy = await startFaultProxy({ target: "http://127.0.0.1:9200" });
 * const sink = ctx.sinkAt(proxy.url);
 * await proxy.setMode("hang");           // Elasticsearch "down": accepts, never answers
 * await proxy.dropBulkItems(0.1);        // 200 OK, 10% of bulk items silently lost
 * await proxy.setMode("pass");
 * await proxy.close();
 */
export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(opts.target);
  const host = opts.host ?? "127.0.0.1";
  const random = opts.random ?? Math.random;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 128 });
  const sockets = new Set<Socket>();
  const observers = new Set<(e: BulkExchange) => void>();
  let stats = emptyStats();
  let mode: FaultMode = { kind: "pass" };
  let closed = false;
  const remaining = new WeakMap<FaultMode, number>();

  /** Counts one faulty answer of a mode with `times`; the last one switches back to `pass`. */
  function countDown(m: FaultMode & { times?: number }): void {
    if (m.times === undefined) return;
    const left = (remaining.get(m) ?? m.times) - 1;
    remaining.set(m, left);
    if (left <= 0 && mode === m) mode = { kind: "pass" };
  }

  function forward(req: http.IncomingMessage, body: Buffer, stripEncoding: boolean): Promise<Upstream> {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && k !== "host" && v !== undefined) headers[k] = v;
    if (stripEncoding) delete headers["accept-encoding"];
    headers["content-length"] = String(body.length);
    return new Promise((resolve, reject) => {
      const up = http.request({ protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      });
      up.on("error", reject);
      up.end(body);
    });
  }

  function respond(res: http.ServerResponse, up: Upstream, body: Buffer = up.body): void {
    if (res.destroyed || res.headersSent) return;
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
    if (body !== up.body) delete headers["content-encoding"];
    headers["content-length"] = String(body.length);
    res.writeHead(up.status, headers);
    res.end(body);
  }

  function badGateway(res: http.ServerResponse, err: unknown): void {
    if (res.destroyed) return;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(502, { "content-type": "text/plain" });
    res.end(`fault proxy: upstream failed: ${String(err)}`);
  }

  function passThrough(req: http.IncomingMessage, res: http.ServerResponse): void {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && k !== "host" && v !== undefined) headers[k] = v;
    const up = http.request({ protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (upRes) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(upRes.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
      res.writeHead(upRes.statusCode ?? 502, out);
      upRes.pipe(res);
    });
    up.on("error", (err) => badGateway(res, err));
    res.on("close", () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }

  async function bulk(req: http.IncomingMessage, res: http.ServerResponse, m: FaultMode, body: Buffer, counted = false): Promise<void> {
    let raw = body;
    const bytes = body.length;
    if (req.headers["content-encoding"] === "gzip") {
      raw = gunzipSync(raw);
      delete req.headers["content-encoding"];
    }
    const items = parseBulk(raw.toString("utf8"));
    if (!counted) stats.bulkRequests += 1;
    stats.bulkItems += items.length;
    const faulty = m.kind === "dropBulkItems" || m.kind === "rejectBulkItems";
    const drops = faulty ? pickDrops(items.length, m.fraction, random) : new Set<number>();
    if (m.kind === "rejectBulkItems") {
      stats.bulkItemsRejected += drops.size;
      if (drops.size > 0) countDown(m);
    } else stats.bulkItemsDropped += drops.size;
    const kept = items.filter((_, i) => !drops.has(i));
    const sentAt = Date.now();
    let upItems: Record<string, Record<string, unknown>>[] = [];
    let upBody: Record<string, unknown> = { took: 0, errors: false };
    if (kept.length > 0) {
      const up = await forward(req, Buffer.from(kept.flatMap((k) => k.lines).join("\n") + "\n"), true);
      if (up.status !== 200) {
        respond(res, up);
        return;
      }
      upBody = JSON.parse(up.body.toString("utf8")) as Record<string, unknown>;
      upItems = (upBody.items as typeof upItems | undefined) ?? [];
    }
    const receivedAt = Date.now();
    if (observers.size > 0) {
      const exchange: BulkExchange = { sentAt, receivedAt, bytes, items: itemRecords(kept, upItems) };
      for (const o of observers) o(exchange);
    }
    const merged = mergeItems(items, drops, upItems, m.kind === "dropBulkItems" && m.forge === true, m.kind === "rejectBulkItems" ? m.status : undefined);
    const answer = Buffer.from(JSON.stringify({ ...upBody, ...(m.kind === "rejectBulkItems" && drops.size > 0 ? { errors: true } : {}), items: merged }));
    if (!res.destroyed) {
      res.writeHead(200, { ...ES_HEADERS, "content-length": String(answer.length) });
      res.end(answer);
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    stats.requests += 1;
    const m = mode;
    switch (m.kind) {
      case "refuse":
        stats.refused += 1;
        req.socket.destroy();
        return;
      case "reset":
        stats.reset += 1;
        req.socket.destroy();
        return;
      case "hang":
        stats.hung += 1;
        req.resume();
        return;
      case "status": {
        await readBody(req);
        countDown(m);
        stats.statuses[m.status] = (stats.statuses[m.status] ?? 0) + 1;
        const body = errorBody(m.status);
        res.writeHead(m.status, { ...ES_HEADERS, "content-length": String(Buffer.byteLength(body)) });
        res.end(body);
        return;
      }
      case "latency": {
        const bulkRequest = isBulk(req);
        if (m.bulkOnly && !bulkRequest) {
          stats.passed += 1;
          passThrough(req, res);
          return;
        }
        stats.delayed += 1;
        // A delayed bulk has left its client: counted now, not when it lands.
        if (bulkRequest) stats.bulkRequests += 1;
        const counted = stats;
        counted.pendingDelayed += 1;
        try {
          const body = await readBody(req);
          await new Promise((r) => setTimeout(r, m.ms + (m.jitterMs ? random() * m.jitterMs : 0)));
          if (closed) return;
          if (bulkRequest && observers.size > 0) {
            await bulk(req, res, { kind: "pass" }, body, true).catch((err) => badGateway(res, err));
            return;
          }
          // Forwarded even if the client has gone: a late write must still land.
          await forward(req, body, false).then((up) => respond(res, up), (err) => badGateway(res, err));
        } finally {
          counted.pendingDelayed -= 1;
        }
        return;
      }
      case "cut": {
        stats.cut += 1;
        const body = await readBody(req);
        const up = await forward(req, body, true).catch(() => undefined);
        if (!up) {
          req.socket.destroy();
          return;
        }
        const headers: http.OutgoingHttpHeaders = { ...ES_HEADERS, "content-length": String(up.body.length) };
        res.writeHead(up.status, headers);
        res.write(up.body.subarray(0, Math.floor(up.body.length / 2)), () => req.socket.destroy());
        return;
      }
      case "bulkSizeLimit":
        if (isBulk(req)) {
          const body = await readBody(req);
          if (body.length > m.maxBytes) {
            stats.bulkTooLarge += 1;
            const text = errorBody(413);
            res.writeHead(413, { ...ES_HEADERS, "content-length": String(Buffer.byteLength(text)) });
            res.end(text);
            return;
          }
          await bulk(req, res, { kind: "pass" }, body).catch((err) => badGateway(res, err));
          return;
        }
        stats.passed += 1;
        passThrough(req, res);
        return;
      case "rejectBulkItems":
      case "dropBulkItems":
      case "pass":
        if (isBulk(req) && (m.kind !== "pass" || observers.size > 0)) {
          const body = await readBody(req);
          await bulk(req, res, m, body).catch((err) => badGateway(res, err));
          return;
        }
        stats.passed += 1;
        passThrough(req, res);
        return;
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => badGateway(res, err));
  });
  server.keepAliveTimeout = 30_000;
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => undefined);
  });
  server.on("clientError", (_err, s) => s.destroy());

  const listen = (port: number) => listenOn(server, port, host);
  const port = await listen(opts.port ?? 0);
  let listening = true;

  async function relisten(): Promise<void> {
    await relistenOn(server, port, host);
    listening = true;
  }

  const proxy: FaultProxy = {
    url: `http://${host}:${port}`,
    port,
    get stats() {
      return stats;
    },
    get mode() {
      return mode;
    },
    async setMode(next) {
      const m = normalize(next);
      mode = m;
      if (m.kind === "refuse" && listening) {
        listening = false;
        server.close();
        for (const s of sockets) s.destroy();
      } else if (m.kind !== "refuse" && !listening && !closed) {
        await relisten();
      }
    },
    dropBulkItems(fraction, o) {
      return proxy.setMode({ kind: "dropBulkItems", fraction, ...(o?.forge ? { forge: true } : {}) });
    },
    observeBulk(listener) {
      observers.add(listener);
      return () => observers.delete(listener);
    },
    resetStats() {
      stats = emptyStats();
    },
    async close() {
      closed = true;
      for (const s of sockets) s.destroy();
      agent.destroy();
      if (listening) await new Promise<void>((r) => server.close(() => r()));
      listening = false;
    },
  };
  return proxy;
}
