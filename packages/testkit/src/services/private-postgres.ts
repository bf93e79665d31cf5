import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { waitForPostgres } from "./postgres-service.js";
import { postgresBinDir, postgresOwnerIds, runAsPostgresOwner } from "./postgres-binaries.js";

/** A Postgres server of the test's own, free to be restarted or killed without disturbing anyone. */
export interface PrivatePostgres {
  /** Superuser URL of its `postgres` database (trust auth on loopback). */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** `pg_ctl restart`: `fast` ends sessions cleanly, `immediate` is a crash (recovery on start). */
  restart(mode?: "fast" | "immediate"): Promise<void>;
  stop(mode?: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
}

export interface PrivatePostgresOptions {
  /** Server settings (`-c name=value`), over the defaults: loopback, a free port, fsync off, 200 connections. */
  settings?: Record<string, string>;
  /**
   * Postgres major ("17") or full embedded-binaries version ("17.11.0"). Default: the machine's
   * newest; another major comes from Maven Central (see postgres-binaries.ts).
   */
  version?: string;
  /**
   * Files written into the data directory after initdb, owned by the server user with mode 0600
   * (a TLS key must be): name them in `settings` by relative path (`ssl_cert_file: "server.crt"`).
   */
  files?: Record<string, string>;
  /**
   * Query string of the server's `url` (and of the readiness check), e.g. the TLS parameters a
   * `pg_hba.conf` given in `files` that admits only `hostssl` requires.
   */
  urlQuery?: string;
}

/**
 * initdb into a fresh temporary directory and start a server on a free loopback port, from the
 * machine's own PostgreSQL binaries or those of `version`. Postgres refuses to run as root: as
 * root it runs as the `postgres` system user.
 *
 * @example
 * const pg = await startPrivatePostgres({ version: "18" });
 * try { … await pg.restart("immediate"); … } finally { await pg.close(); }
 */
export async function startPrivatePostgres(opts: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const bin = await postgresBinDir(opts.version);
  const base = mkdtempSync(join(tmpdir(), "tether-pg-"));
  const dataDir = join(base, "data");
  const asOwner = (file: string, args: string[], timeoutMs = 120_000) => runAsPostgresOwner(file, args, timeoutMs);
  const owner = await postgresOwnerIds();
  if (owner) chownSync(base, owner.uid, owner.gid);
  chmodSync(base, 0o755);
  await asOwner(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  for (const [name, content] of Object.entries(opts.files ?? {})) {
    const file = join(dataDir, name);
    writeFileSync(file, content, { mode: 0o600 });
    if (owner) chownSync(file, owner.uid, owner.gid);
  }
  const port = await freePort();
  const settings = { listen_addresses: "127.0.0.1", port: String(port), unix_socket_directories: base, fsync: "off", max_connections: "200", ...opts.settings };
  const o = Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`).join(" ");
  const log = join(base, "server.log");
  const start = async () => {
    await asOwner(join(bin, "pg_ctl"), ["-D", dataDir, "-l", log, "-o", o, "-w", "-t", "60", "start"]);
  };
  const stop = async (mode: "fast" | "immediate" = "fast") => {
    await asOwner(join(bin, "pg_ctl"), ["-D", dataDir, "-m", mode, "-w", "-t", "60", "stop"]);
  };
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres${opts.urlQuery ? `?${opts.urlQuery}` : ""}`;
  try {
    await waitForPostgres(url);
  } catch (err) {
    // Started but not reachable as asked (a pg_hba.conf refusing the URL, say): no server left behind.
    await stop("immediate").catch(() => undefined);
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
  let closed = false;
  return {
    url,
    port,
    dataDir,
    async restart(mode = "fast") {
      await stop(mode);
      await start();
      await waitForPostgres(url);
    },
    stop,
    async start() {
      await start();
      await waitForPostgres(url);
    },
    async close() {
      if (closed) return;
      closed = true;
      await stop("immediate").catch(() => undefined);
      rmSync(base, { recursive: true, force: true });
    },
  };
}
