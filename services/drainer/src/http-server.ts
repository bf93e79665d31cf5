import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type pino from "pino";
import type { Kysely } from "kysely";
import { evaluateAlerts, type AlertThresholds, type Drainer } from "@tether/core";
import type { DaemonState } from "./daemon-state.js";
import type { MetricsRegistry } from "./metrics-registry.js";

export interface DrainerServerOptions {
  db: Kysely<any>;
  drainer: Drainer;
  state: DaemonState;
  metrics: MetricsRegistry;
  alertThresholds: AlertThresholds;
  logger: pino.Logger;
}

/**
 * GET /healthz, /metrics and /alerts. Request logging is off: Prometheus and the kubelet would
 * otherwise write a line every few seconds per replica.
 */
export function buildDrainerServer(opts: DrainerServerOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: opts.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });

  // 200 while the drain loop runs (a failed pass, e.g. Postgres unreachable, is retried by the
  // loop itself; restarting the process would not help) or when the last pass succeeded.
  app.get("/healthz", async (_req, reply) => {
    const { state, drainer } = opts;
    const running = drainer.running;
    const lastFailed = state.lastPass?.error !== undefined;
    const ok = running || !lastFailed;
    const status = !ok ? "failing" : lastFailed ? "degraded" : running ? "ok" : "stopped";
    return reply.code(ok ? 200 : 503).send({ status, running, ...state });
  });

  app.get("/metrics", async (_req, reply) => {
    const text = await opts.metrics.scrape();
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(text);
  });

  // 200 whatever fires (the body's `firing` says it); 503 only when Postgres cannot be asked.
  app.get("/alerts", async (_req, reply) => {
    try {
      return reply.send(await evaluateAlerts(opts.db, opts.alertThresholds));
    } catch (err) {
      opts.logger.warn({ err: String(err) }, "could not evaluate alerts");
      return reply.code(503).send({ error: "cannot evaluate alerts", detail: String(err) });
    }
  });

  return app;
}
