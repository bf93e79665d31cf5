import { spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "./free-port.js";
import { postgresOwnerIds } from "./postgres-binaries.js";
import { waitForPostgres } from "./postgres-service.js";

/** A PgBouncer of the test's own in front of one Postgres server. */
export interface PgBouncer {
  readonly port: number;
  /** `databaseUrl` (a database of the target server) as reached through this pooler. */
  urlFor(databaseUrl: string): string;
  /** Counters of `SHOW STATS` for `database` (transactions and queries it pooled so far, as of the last second). */
  stats(database: string): Promise<{ transactions: number; queries: number }>;
  /** The last lines of its log, for failure messages. */
  log(): string;
  /** Stops it (SIGINT: immediate shutdown, clients cut) and removes its folder. */
  close(): Promise<void>;
}

export interface PgBouncerOptions {
  /** A connection string of the server to pool (its host and port; every database is served). */
  target: string;
  /** Default "transaction": a server connection is a client's only for one transaction. */
  poolMode?: "transaction" | "session" | "statement";
  /** Server connections per database and user. Default 10. */
  poolSize?: number;
}

/** The pgbouncer binary: TETHER_PGBOUNCER, else Debian's (scripts/install-pgbouncer installs it). */
function pgbouncerBinary(): string {
  const candidates = [process.env.TETHER_PGBOUNCER, "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].filter((b): b is string => !!b);
  const found = candidates.find((b) => existsSync(b));
  if (!found) throw new Error("no pgbouncer binary: run scripts/install-pgbouncer (Debian package pgbouncer), or set TETHER_PGBOUNCER");
  return found;
}

/**
 * Starts PgBouncer on a free loopback port in front of `target`'s server, trust auth (the
 * target's own), pooling every database in `poolMode`. PgBouncer refuses to run as root: as root
 * it runs as the `postgres` system user. It is this process's child: it ends with `close()`.
 *
 * @example
 * const bouncer = await startPgBouncer({ target: ctx.databaseUrl, poolMode: "transaction" });
 * const db = createDb({ connectionString: bouncer.urlFor(ctx.databaseUrl) });
 */
export async function startPgBouncer(opts: PgBouncerOptions): Promise<PgBouncer> {
  const bin = pgbouncerBinary();
  const target = new URL(opts.target);
  const dir = mkdtempSync(join(tmpdir(), "tether-pgbouncer-"));
  const port = await freePort();
  const user = decodeURIComponent(target.username || "postgres");
  const ini = join(dir, "pgbouncer.ini");
  const logFile = join(dir, "pgbouncer.log");
  writeFileSync(join(dir, "userlist.txt"), `"${user}" ""\n`);
  writeFileSync(
    ini,
    [
      "[databases]",
      // Every database of the target server, under its own name.
      `* = host=${target.hostname} port=${target.port || "5432"}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "userlist.txt")}`,
      `admin_users = ${user}`,
      `stats_users = ${user}`,
      `pool_mode = ${opts.poolMode ?? "transaction"}`,
      `default_pool_size = ${opts.poolSize ?? 10}`,
      "max_client_conn = 1000",
      // SHOW STATS totals are refreshed every stats_period: every second, so stats() is current.
      "stats_period = 1",
      `logfile = ${logFile}`,
      "",
    ].join("\n"),
  );
  const owner = await postgresOwnerIds();
  if (owner) for (const f of [dir, ini, join(dir, "userlist.txt")]) chownSync(f, owner.uid, owner.gid);
  chmodSync(dir, 0o755);
  // Spawned as the user itself (not through runuser, which would stand between the signal and it).
  const child = spawn(bin, [ini], { stdio: "ignore", ...(owner ? { uid: owner.uid, gid: owner.gid } : {}) });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const log = () => (existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").slice(-40).join("\n") : "");
  const urlFor = (databaseUrl: string) => {
    const u = new URL(databaseUrl);
    u.hostname = "127.0.0.1";
    u.port = String(port);
    return u.toString();
  };
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGINT");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForPostgres(urlFor(opts.target), 30_000);
  } catch (err) {
    const text = log();
    await close();
    throw new Error(`PgBouncer did not start: ${err instanceof Error ? err.message : String(err)}\n${text}`);
  }
  return {
    port,
    urlFor,
    async stats(database) {
      const admin = new pg.Client({ connectionString: urlFor(new URL(`/pgbouncer`, opts.target).toString()) });
      await admin.connect();
      try {
        const r = await admin.query<{ database: string; total_xact_count: string; total_query_count: string }>("SHOW STATS");
        const row = r.rows.find((x) => x.database === database);
        return { transactions: Number(row?.total_xact_count ?? 0), queries: Number(row?.total_query_count ?? 0) };
      } finally {
        await admin.end().catch(() => undefined);
      }
    },
    log,
    close,
  };
}
