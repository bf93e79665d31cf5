import pg from "pg";
import { readdirSync, existsSync } from "node:fs";
import { dockerEngineAnswers } from "./docker-engine.js";
import { runCommand } from "./run-command.js";
import type { ServiceRecord } from "./services-state.js";

const LOCAL_URL = "postgres://postgres@127.0.0.1:5432/postgres";

/** Resolves once `SELECT 1` succeeds, or throws after `timeoutMs`. */
export async function waitForPostgres(url: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      const r = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
      return r.rows[0]?.v ?? "?";
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw new Error(`Postgres at ${redact(url)} did not answer within ${timeoutMs} ms: ${String(last)}`);
}

export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]+)@/, "//$1:***@");
}

async function startLocalCluster(): Promise<void> {
  const etc = "/etc/postgresql";
  if (!existsSync(etc)) throw new Error("no PostgreSQL server is installed on this machine (no /etc/postgresql); set DATABASE_URL");
  for (const version of readdirSync(etc)) {
    await runCommand("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "start"], { timeoutMs: 60_000 });
  }
}

/**
 * Finds a Postgres for tests and the quick start: DATABASE_URL if given; else a Docker engine
 * via testcontainers; else this machine's PostgreSQL server, started if it is down.
 */
export async function ensurePostgres(opts: { keepContainer?: boolean } = {}): Promise<ServiceRecord> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) {
    const version = await waitForPostgres(fromEnv);
    return { url: fromEnv, via: "env", detail: `PostgreSQL ${version} from DATABASE_URL` };
  }
  if (await dockerEngineAnswers()) {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
    let builder = new PostgreSqlContainer("postgres:16-alpine");
    if (opts.keepContainer) builder = builder.withReuse();
    const c = await builder.start();
    const url = c.getConnectionUri();
    const version = await waitForPostgres(url);
    return { url, via: "testcontainers", detail: `PostgreSQL ${version} in container ${c.getId().slice(0, 12)}`, startedByUs: { containerId: c.getId() } };
  }
  try {
    const version = await waitForPostgres(LOCAL_URL, 3_000);
    return { url: LOCAL_URL, via: "local", detail: `this machine's PostgreSQL ${version} (already running)` };
  } catch {
    await startLocalCluster();
    const version = await waitForPostgres(LOCAL_URL, 30_000);
    return { url: LOCAL_URL, via: "local", detail: `this machine's PostgreSQL ${version} (started it)` };
  }
}
