import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import pg from "pg";
import { alivePid, installBase } from "./maven-node.js";
import { POSTGRES_USER, postgresBinDir, postgresOwnerIds, runAsPostgresOwner } from "./postgres-binaries.js";
import { waitForPostgres } from "./postgres-service.js";
import { postgresVersion } from "./service-versions.js";
import type { ServiceRecord } from "./services-state.js";

/**
 * A Postgres server of another major than the machine's, kept between runs: its data lives in
 * `.cache/postgres/postgres-<version>/data` beside its binaries, it listens on its major's own
 * port (5414, 5416, 5417, 5418), and `scripts/services down` stops it (fast shutdown).
 */

/** The major of the server answering at `url`, or undefined when none answers. */
async function majorAt(url: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    const r = await client.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    return Math.floor(Number(r.rows[0]?.v) / 10_000);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The postmaster pid recorded in `dataDir` when that process is alive. */
export function postmasterPid(dataDir: string): number | undefined {
  const file = join(dataDir, "postmaster.pid");
  if (!existsSync(file)) return undefined;
  return alivePid(Number(readFileSync(file, "utf8").split("\n")[0]));
}

/** Postmaster pids of the versioned servers this checkout started that are still alive. */
export async function runningVersionedPostgres(): Promise<number[]> {
  const base = await installBase("postgres", POSTGRES_USER);
  if (!existsSync(base)) return [];
  return readdirSync(base).flatMap((d) => {
    const pid = postmasterPid(join(base, d, "data"));
    return pid ? [pid] : [];
  });
}

/**
 * Starts (initdb on first use) the Postgres server of `version` ("14", "16", "17", "18" or a
 * full embedded-binaries version) on its own port; reuses one already answering there. Major
 * 15 is the machine's own server: use `ensurePostgres` for it.
 *
 * @example
 * const pg17 = await startVersionedPostgres({ version: "17" }); // postgres://postgres@127.0.0.1:5417/postgres
 */
export async function startVersionedPostgres(opts: { version: string; port?: number }): Promise<ServiceRecord> {
  const v = postgresVersion(opts.version);
  if (v.version === "machine") throw new Error(`Postgres ${v.major} is the machine's own server (scripts/services up postgres)`);
  const port = opts.port ?? v.port;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const bin = await postgresBinDir(v.version);
  const home = dirname(bin);
  const dataDir = join(home, "data");
  const running = await majorAt(url);
  if (running !== undefined) {
    if (running !== v.major) throw new Error(`port ${port} answers with Postgres ${running}, not ${v.major}: free it or give another port`);
    const pid = postmasterPid(dataDir);
    return pid
      ? { url, via: "maven", detail: `PostgreSQL ${v.version} already running from ${dataDir}, pid ${pid}`, startedByUs: { pid, signal: "SIGINT" } }
      : { url, via: "local", detail: `a PostgreSQL ${running} already answering at port ${port}, not started from this checkout (down leaves it running)` };
  }
  const owner = await postgresOwnerIds();
  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    mkdirSync(dataDir, { recursive: true });
    chmodSync(dataDir, 0o700);
    if (owner) chownSync(dataDir, owner.uid, owner.gid);
    await runAsPostgresOwner(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  }
  const settings = { listen_addresses: "127.0.0.1", port: String(port), unix_socket_directories: dataDir, fsync: "off", max_connections: "200" };
  const o = Object.entries(settings).map(([k, val]) => `-c ${k}=${val}`).join(" ");
  await runAsPostgresOwner(join(bin, "pg_ctl"), ["-D", dataDir, "-l", join(dataDir, "server.log"), "-o", o, "-w", "-t", "60", "start"]);
  await waitForPostgres(url);
  const pid = postmasterPid(dataDir);
  // SIGINT is Postgres' fast shutdown: sessions end at once (SIGTERM would wait for every client).
  return { url, via: "maven", detail: `PostgreSQL ${v.version} (embedded-postgres-binaries via Maven) in ${dataDir}, pid ${pid}`, startedByUs: { ...(pid ? { pid } : {}), signal: "SIGINT" } };
}
