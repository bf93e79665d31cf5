import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";
import { waitForPostgres } from "./postgres-service.js";
import { runCommand } from "./run-command.js";

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

/** The newest Debian PostgreSQL binaries (/usr/lib/postgresql/<major>/bin). */
function debianBinDir(): string {
  const root = "/usr/lib/postgresql";
  const majors = existsSync(root) ? readdirSync(root).filter((d) => existsSync(join(root, d, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a)) : [];
  if (majors.length === 0) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (Debian package postgresql)");
  return join(root, majors[0]!, "bin");
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/**
 * initdb into a fresh temporary directory and start a server on a free loopback port, from the
 * machine's own PostgreSQL binaries. Postgres refuses to run as root: as root it runs as the
 * `postgres` system user.
 *
 * @example
 * const pg = await startPrivatePostgres();
 * try { … await pg.restart("immediate"); … } finally { await pg.close(); }
 */
export async function startPrivatePostgres(opts: { settings?: Record<string, string> } = {}): Promise<PrivatePostgres> {
  const bin = debianBinDir();
  const base = mkdtempSync(join(tmpdir(), "tether-pg-"));
  const dataDir = join(base, "data");
  const asOwner = async (file: string, args: string[], timeoutMs = 120_000) => {
    const r = isRoot() ? await runCommand("runuser", ["-u", "postgres", "--", file, ...args], { timeoutMs }) : await runCommand(file, args, { timeoutMs });
    if (r.code !== 0) throw new Error(`${file} ${args.join(" ")} failed (exit ${r.code}): ${(r.stdout + r.stderr).slice(-1500)}`);
  };
  if (isRoot()) {
    const id = await runCommand("id", ["-u", "postgres"]);
    const gid = await runCommand("id", ["-g", "postgres"]);
    if (id.code !== 0) throw new Error("running as root needs the postgres system user (Debian package postgresql)");
    chownSync(base, Number(id.stdout.trim()), Number(gid.stdout.trim()));
  }
  chmodSync(base, 0o755);
  await asOwner(join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
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
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitForPostgres(url);
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
