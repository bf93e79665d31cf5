import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { ensureDebianPackage } from "./java-home.js";
import { cacheDir, repoRoot } from "./repo-paths.js";
import { runCommand } from "./run-command.js";

/**
 * What Elasticsearch's and OpenSearch's integ-test distributions have in common when run
 * from Maven Central on a machine without Docker: the download, an install folder the
 * service user can reach, a non-root user (both refuse root), and the pid file of a node.
 */

export function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

const usersMade = new Map<string, Promise<void>>();

/** Creates the system user a node runs as, when running as root (once per user, however many nodes start at once). */
export function ensureServiceUser(user: string): Promise<void> {
  let made = usersMade.get(user);
  if (!made) usersMade.set(user, (made = createServiceUser(user)));
  return made;
}

async function createServiceUser(user: string): Promise<void> {
  if (!isRoot()) return;
  const r = await runCommand("id", ["-u", user]);
  if (r.code === 0) return;
  const add = await runCommand("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user]);
  // Nodes start side by side: another may have created the user between the check and the add.
  if (add.code !== 0 && (await runCommand("id", ["-u", user])).code !== 0) throw new Error(`cannot create user ${user}: ${add.stderr}`);
}

/** Downloads `group:artifact:version:zip` through Maven (once) and returns the zip path. */
export async function ensureMavenZip(group: string, artifact: string, version: string): Promise<string> {
  return ensureMavenArtifact(group, artifact, version, "zip");
}

/** Downloads `group:artifact:version:packaging` through Maven (once) and returns its path in the local repository. */
export async function ensureMavenArtifact(group: string, artifact: string, version: string, packaging: "zip" | "jar"): Promise<string> {
  const local = join(homedir(), ".m2", "repository", ...group.split("."), artifact, version, `${artifact}-${version}.${packaging}`);
  if (existsSync(local)) return local;
  await ensureDebianPackage("mvn", "maven");
  const r = await runCommand(
    "mvn",
    ["-B", "-q", "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get", `-Dartifact=${group}:${artifact}:${version}:${packaging}`, "-Dtransitive=false"],
    { timeoutMs: 600_000 },
  );
  if (r.code !== 0 || !existsSync(local)) {
    throw new Error(`Maven could not fetch ${group}:${artifact}:${version}:${packaging} (exit ${r.code}): ${(r.stdout + r.stderr).slice(-2000)}`);
  }
  return local;
}

const unzipping = new Map<string, Promise<void>>();

/**
 * Unzips the distribution into `base` unless `home/bin/<bin>` is already there (then nothing is
 * downloaded). Two services on one distribution (a plain and a secured node) share one unzip.
 */
export function ensureUnzipped(download: () => Promise<string>, base: string, home: string, bin: string): Promise<void> {
  let done = unzipping.get(home);
  if (!done) {
    done = unzip(download, base, home, bin);
    unzipping.set(home, done);
    done.catch(() => unzipping.delete(home));
  }
  return done;
}

async function unzip(download: () => Promise<string>, base: string, home: string, bin: string): Promise<void> {
  if (existsSync(join(home, "bin", bin))) return;
  const zip = await download();
  await ensureDebianPackage("unzip", "unzip");
  const r = await runCommand("unzip", ["-q", "-o", zip, "-d", base], { timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`unzip ${zip} failed: ${r.stderr}`);
}

/**
 * The install folders of `name`: the repo cache first, a world-traversable temp folder second.
 * The temp folder is named after this checkout, so `scripts/services down` in one checkout never
 * finds (and stops) a node another checkout started.
 */
function installBases(name: string): string[] {
  const checkout = createHash("sha256").update(repoRoot()).digest("hex").slice(0, 8);
  return [join(cacheDir(), name), join(tmpdir(), `tether-${name}-${checkout}`)];
}

/** A folder the service user can reach: the repo cache when its parents are traversable. */
export async function installBase(name: string, user: string): Promise<string> {
  // The user must exist before its access is probed, or the probe fails and the fallback wins.
  await ensureServiceUser(user);
  const [preferred, fallback] = installBases(name) as [string, string];
  mkdirSync(preferred, { recursive: true });
  if (!isRoot()) return preferred;
  const probe = await runCommand("runuser", ["-u", user, "--", "test", "-x", preferred]);
  if (probe.code === 0) return preferred;
  mkdirSync(fallback, { recursive: true });
  chmodSync(fallback, 0o755);
  return fallback;
}

/** `pid` when it is a process that is alive, else undefined. */
export function alivePid(pid: number): number | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/** The pid in `pidFile` when that process is alive, else undefined. */
export function livePid(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  return alivePid(Number(readFileSync(pidFile, "utf8").trim()));
}

/** Pids of the nodes of `name` started from this checkout's install folders that are still alive. */
export function runningNodes(name: string, pidFileName: string): number[] {
  const pids: number[] = [];
  for (const base of installBases(name)) {
    if (!existsSync(base)) continue;
    for (const d of readdirSync(base)) {
      const pid = livePid(join(base, d, pidFileName));
      if (pid) pids.push(pid);
    }
  }
  return pids;
}

/**
 * Runs a start command that daemonizes (`-d`) with its output appended to `logFile`, and
 * resolves with its exit code. Not through pipes: a daemon that keeps the inherited stderr
 * open would hold them, and the caller would wait for it to exit.
 */
export async function runDaemonStart(file: string, args: string[], env: NodeJS.ProcessEnv, logFile: string, timeoutMs = 300_000): Promise<{ code: number; output: string }> {
  const fd = openSync(logFile, "a");
  try {
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn(file, args, { env, stdio: ["ignore", fd, fd] });
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`${file} ${args.join(" ")} did not return within ${timeoutMs} ms`));
      }, timeoutMs);
      child.once("error", reject);
      child.once("exit", (c) => {
        clearTimeout(timer);
        resolve(c ?? 1);
      });
    });
    return { code, output: readFileSync(logFile, "utf8").slice(-2000) };
  } finally {
    closeSync(fd);
  }
}

/** Polls `probe` until it reports a green or yellow cluster; throws after `timeoutMs`. */
export async function waitUntilHealthy<H extends { status: string }>(product: string, url: string, probe: (url: string) => Promise<H | undefined>, timeoutMs: number): Promise<H> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const h = await probe(url);
    if (h && (h.status === "green" || h.status === "yellow")) return h;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${product} at ${url} was not healthy (yellow) within ${timeoutMs} ms`);
}
