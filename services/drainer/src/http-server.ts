import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type pino from "pino";
import type { Kysely } from "kysely";
import { evaluateAlerts, type AlertThresholds, type Drainer } from "@tether/core";
import { errorContract, errorContractServerOptions, HttpError } from "@tether/service-kit";
import type { DaemonState } from "./daemon-state.js";
import type { MetricsRegistry } from "./metrics-registry.js";

export interface DrainerServerOptions {
  db: Kysely<any>;
  drainer: Drainer;
  /** Names of the configured collections (the verify-overdue alert covers each). */
  collections: readonly string[];
  /** When this daemon started scheduling verify runs (verify_overdue counts a collection with no run at all from then). */
  scheduleStartedAt: Date;
  state: DaemonState;
  metrics: MetricsRegistry;
  alertThresholds: AlertThresholds;
  logger: pino.Logger;
}

/**
 * What an error looks like on the unauthenticated /healthz: a category, never the driver's text
 * (it names hosts and ports). The full message is in the drainer's log.
 */
export function errorCategory(message: string | undefined): string | undefined {
  if (message === undefined) return undefined;
  if (/deadline/i.test(message)) return "deadline_exceeded";
  if (/^permission denied: /.test(message)) return "forbidden";
  if (/ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|Connection terminated|timeout exceeded when trying to connect|NoLivingConnections|ConnectionError|TimeoutError/i.test(message)) return "unreachable";
  return "failed";
}

function publicState(state: DaemonState): DaemonState {
  const lastPass = state.lastPass && { ...state.lastPass, ...(state.lastPass.error !== undefined ? { error: errorCategory(state.lastPass.error) } : {}) };
  const lastMaintenance = state.lastMaintenance && { ...state.lastMaintenance, ...(state.lastMaintenance.error !== undefined ? { error: errorCategory(state.lastMaintenance.error) } : {}) };
  return { ...state, lastPass, lastMaintenance };
}

/**
 * GET /healthz, /metrics and /alerts, with the error contract of every Tether service. Request
 * logging is off: Prometheus and the kubelet would otherwise write a line every few seconds per replica.
 */
export async function buildDrainerServer(opts: DrainerServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    ...errorContractServerOptions(),
  });
  await app.register(errorContract);

  // 200 while the drain loop runs (a failed pass, e.g. Postgres unreachable, is retried by the
  // loop itself; restarting the process would not help) or when the last pass succeeded.
  app.get("/healthz", async (_req, reply) => {
    const { state, drainer } = opts;
    const running = drainer.running;
    const lastFailed = state.lastPass?.error !== undefined;
    const ok = running || !lastFailed;
    const status = !ok ? "failing" : lastFailed ? "degraded" : running ? "ok" : "stopped";
    return reply.code(ok ? 200 : 503).send({ status, running, ...publicState(state) });
  });

  app.get("/metrics", async (_req, reply) => {
    const text = await opts.metrics.scrape();
    return reply.type("text/plain; version=0.0.4; charset=utf-8").send(text);
  });

  // 200 whatever fires (the body's `firing` says it); 503 only when Postgres cannot be asked.
  app.get("/alerts", async (_req, reply) => {
    try {
      return reply.send(await evaluateAlerts(opts.db, opts.alertThresholds, { collections: opts.collections, scheduleStartedAt: opts.scheduleStartedAt }));
    } catch (err) {
      opts.logger.warn({ err: String(err) }, "could not evaluate alerts");
      throw new HttpError("database_unavailable", "cannot evaluate alerts: the database did not answer; see the drainer's log", { cause: err });
    }
  });

  return app;
}
