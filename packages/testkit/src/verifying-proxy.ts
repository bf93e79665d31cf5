import http from "node:http";
import https from "node:https";
import type { TLSSocket } from "node:tls";
import { listenOn } from "./listen-on.js";

/** One request as the proxy received it, whole. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The client's certificate, when it presented one over TLS. */
  clientCertificate?: { subject: string };
}

/** What the check decides: forward (with these headers in place of the client's `authorization`), or answer itself. */
export type Verdict = { forward: { authorization?: string } } | { refuse: { status: number; reason: string } };

export interface VerifyingProxyOptions {
  /** Where accepted requests go, e.g. "http://127.0.0.1:9201" or a secured node's https URL. */
  target: string;
  /** PEM CA the target's certificate is checked against (an https target with a private CA). */
  targetCa?: Buffer;
  /** Serve HTTPS with this certificate; with `requireClientCertificate`, only to clients whose certificate `ca` signed. */
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer; requireClientCertificate?: boolean };
  /** Decides each request. */
  check(req: ReceivedRequest): Verdict | Promise<Verdict>;
}

export interface VerifyingProxy {
  url: string;
  /** Every request received, accepted or not. */
  received: ReceivedRequest[];
  /** How many were refused, and why (the last reasons). */
  refused: string[];
  close(): Promise<void>;
}

/**
 * An endpoint in front of a real engine that checks what a client sends before forwarding it:
 * a signature (SigV4), a credential the engine itself cannot issue here (an API key, a bearer
 * token, mapped to a user it knows), a client certificate. Refused requests get the engine's
 * own error shape (`security_exception`).
 *
 * @example
 * const proxy = await startVerifyingProxy({ target: "http://127.0.0.1:9201", check: (r) => (r.headers["x-ok"] ? { forward: {} } : { refuse: { status: 403, reason: "no" } }) });
 */
export async function startVerifyingProxy(opts: VerifyingProxyOptions): Promise<VerifyingProxy> {
  const target = new URL(opts.target);
  const received: ReceivedRequest[] = [];
  const refused: string[] = [];
  const agent = target.protocol === "https:" ? new https.Agent({ keepAlive: true, ...(opts.targetCa ? { ca: opts.targetCa } : {}) }) : new http.Agent({ keepAlive: true });
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const socket = req.socket as TLSSocket;
      const peer = typeof socket.getPeerCertificate === "function" ? socket.getPeerCertificate() : undefined;
      const r: ReceivedRequest = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks), ...(peer?.subject ? { clientCertificate: { subject: JSON.stringify(peer.subject) } } : {}) };
      received.push(r);
      let verdict: Verdict;
      try {
        verdict = await opts.check(r);
      } catch (err) {
        verdict = { refuse: { status: 500, reason: String(err) } };
      }
      if ("refuse" in verdict) {
        refused.push(verdict.refuse.reason);
        const body = JSON.stringify({ error: { type: "security_exception", reason: verdict.refuse.reason }, status: verdict.refuse.status });
        res.writeHead(verdict.refuse.status, { "content-type": "application/json", "x-elastic-product": "Elasticsearch" });
        res.end(body);
        return;
      }
      const headers: http.OutgoingHttpHeaders = { ...req.headers, host: target.host, "content-length": String(r.body.length) };
      delete headers.authorization;
      delete headers["transfer-encoding"];
      if (verdict.forward.authorization) headers.authorization = verdict.forward.authorization;
      const client = target.protocol === "https:" ? https : http;
      const up = client.request({ protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on("error", (err) => {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { type: "proxy_error", reason: err.message } }));
      });
      up.end(r.body);
    });
  };
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key, ...(opts.tls.ca ? { ca: opts.tls.ca } : {}), requestCert: opts.tls.requireClientCertificate === true, rejectUnauthorized: opts.tls.requireClientCertificate === true }, handler)
    : http.createServer(handler);
  const port = await listenOn(server, 0, "127.0.0.1");
  return {
    url: `${opts.tls ? "https" : "http"}://127.0.0.1:${port}`,
    received,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
