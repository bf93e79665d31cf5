import { existsSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { runCommand } from "./run-command.js";

async function javaMajor(javaBin: string): Promise<number> {
  const r = await runCommand(javaBin, ["-version"], { timeoutMs: 20_000 });
  const m = /version "(\d+)(?:\.(\d+))?/.exec(r.stderr + r.stdout);
  if (!m) return 0;
  return m[1] === "1" ? Number(m[2]) : Number(m[1]);
}

let aptQueue: Promise<unknown> = Promise.resolve();

/**
 * Installs a Debian package when `command` is missing (the project installs what it needs).
 * Services start side by side and apt holds one lock: installs run one after another.
 */
export function ensureDebianPackage(command: string, pkg: string): Promise<void> {
  const next = aptQueue.then(() => installDebianPackage(command, pkg));
  aptQueue = next.catch(() => undefined);
  return next;
}

async function installDebianPackage(command: string, pkg: string): Promise<void> {
  const which = await runCommand("sh", ["-c", `command -v ${command}`]);
  if (which.code === 0) return;
  await runCommand("apt-get", ["update", "-qq"], { timeoutMs: 300_000 });
  const r = await runCommand("apt-get", ["install", "-y", "-qq", pkg], {
    timeoutMs: 600_000,
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (r.code !== 0) throw new Error(`apt-get install ${pkg} failed: ${r.stderr.slice(-1000)}`);
}

/** The first Java home (ES_JAVA_HOME, JAVA_HOME, /usr/lib/jvm, PATH) with `bin/<tool>` and min <= java <= max. */
async function findHome(min: number, max: number, tool: "java" | "javac"): Promise<string | undefined> {
  const candidates: string[] = [];
  if (process.env.ES_JAVA_HOME) candidates.push(process.env.ES_JAVA_HOME);
  if (process.env.JAVA_HOME) candidates.push(process.env.JAVA_HOME);
  const jvm = "/usr/lib/jvm";
  if (existsSync(jvm)) for (const d of readdirSync(jvm).sort()) candidates.push(join(jvm, d));
  const onPath = await runCommand("sh", ["-c", "command -v java"]);
  if (onPath.code === 0) candidates.push(dirname(dirname(realpathSync(onPath.stdout.trim()))));
  for (const home of candidates) {
    if (!existsSync(join(home, "bin", "java")) || !existsSync(join(home, "bin", tool))) continue;
    const major = await javaMajor(join(home, "bin", "java"));
    if (major >= min && major <= max) return home;
  }
  return undefined;
}

/**
 * A JDK/JRE home with `min` <= java <= `max`: Elasticsearch 8.x and OpenSearch 2.x run on
 * 17..23, Elasticsearch 9.x and OpenSearch 3.x on 21..25 (the Temurin 25 JDK under /usr/lib/jvm).
 * ES_JAVA_HOME and JAVA_HOME are tried first, then every JDK under /usr/lib/jvm, then `java`.
 */
export async function findJavaHome(min: number, max = 23, installed = false): Promise<string> {
  const home = await findHome(min, max, "java");
  if (home) return home;
  // Debian's openjdk-17 serves the 17..23 range; nothing newer is a Debian package here.
  if (installed || min > 17) throw new Error(`no Java ${min}..${max} found (looked in ES_JAVA_HOME, JAVA_HOME, /usr/lib/jvm and PATH); install one and set ES_JAVA_HOME`);
  await ensureDebianPackage("__no_such_command__", "openjdk-17-jre-headless");
  return findJavaHome(min, max, true);
}

/** A JDK (with `javac` and `jar`) of Java `min` or newer, looked for where findJavaHome looks; Debian's openjdk-17 JDK is installed when there is none. */
export async function findJdkHome(min = 17): Promise<string> {
  const home = await findHome(min, Number.MAX_SAFE_INTEGER, "javac");
  if (home) return home;
  if (min > 17) throw new Error(`no JDK ${min}+ found (looked in ES_JAVA_HOME, JAVA_HOME, /usr/lib/jvm and PATH); install one and set JAVA_HOME`);
  await ensureDebianPackage("__no_such_command__", "openjdk-17-jdk-headless");
  const installed = await findHome(min, Number.MAX_SAFE_INTEGER, "javac");
  if (!installed) throw new Error("openjdk-17-jdk-headless was installed, yet no javac was found under /usr/lib/jvm");
  return installed;
}
