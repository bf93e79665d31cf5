import { request as httpRequest, createServer, type IncomingMessage } from "node:http";
import { EventEmitter } from "node:events";
import { listenOn } from "./listen-on.js";

/** One request the proxy passed on. */
export interface ServedRequest {
  method: string;
  /** Path and query, as the client sent them. */
  url: string;
  /** Index of the upstream that answered. */
  upstream: number;
  status: number;
}

/** Picks the upstream of a request; undefined: the next in turn. */
export type SteerRule = (method: string, url: string) => number | undefined;

export interface RoundRobinProxy {
  url: string;
  /** Every request answered so far, in order. */
  served: ServedRequest[];
  /** Emits "served" with a ServedRequest as each answer starts (tests await it). */
  events: EventEmitter;
  /** Sends the requests a rule picks to one upstream (log in through this replica, act through that one); the rest keep rotating. */
  steer(rule: SteerRule | undefined): void;
  close(): Promise<void>;
}

/** The header every answer carries: which upstream (by index) answered it. */
export const UPSTREAM_HEADER = "x-upstream";

/**
 * A load balancer of the test's own in front of several replicas of an HTTP service: each request
 * goes to the next upstream in turn (no stickiness of any kind), unless a steering rule picks one.
 * Answers carry `x-upstream: <index>`; an unreachable upstream answers 502.
 *
 * @example
 * const lb = await startRoundRobinProxy([api1.url, api2.url]);
 * lb.steer((method, url) => (method === "POST" && url.endsWith("/session") ? 0 : undefined));
 */
export async function startRoundRobinProxy(upstreams: readonly string[]): Promise<RoundRobinProxy> {
  if (upstreams.length === 0) throw new Error("startRoundRobinProxy needs at least one upstream");
  const targets = upstreams.map((u) => new URL(u));
  const served: ServedRequest[] = [];
  const events = new EventEmitter();
  let next = 0;
  let rule: SteerRule | undefined;
  const record = (req: IncomingMessage, upstream: number, status: number) => {
    const entry = { method: req.method ?? "GET", url: req.url ?? "/", upstream, status };
    served.push(entry);
    events.emit("served", entry);
  };

  const server = createServer((req, res) => {
    const steered = rule?.(req.method ?? "GET", req.url ?? "/");
    const upstream = steered ?? next++ % targets.length;
    const target = targets[upstream]!;
    const out = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (answer) => {
        for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined) res.setHeader(k, v);
        res.setHeader(UPSTREAM_HEADER, String(upstream));
        res.writeHead(answer.statusCode ?? 502);
        record(req, upstream, answer.statusCode ?? 502);
        answer.pipe(res);
      },
    );
    out.on("error", (err) => {
      if (res.headersSent) return res.destroy(err);
      record(req, upstream, 502);
      res.writeHead(502, { "content-type": "application/json", [UPSTREAM_HEADER]: String(upstream) });
      res.end(JSON.stringify({ error: "bad_gateway", message: `upstream ${upstream} failed: ${err.message}` }));
    });
    req.pipe(out);
  });
  const port = await listenOn(server, 0, "127.0.0.1");
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    events,
    steer(r) {
      rule = r;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
