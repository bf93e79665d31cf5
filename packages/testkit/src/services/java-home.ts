import { existsSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { runCommand } from "./run-command.js";

async function javaMajor(javaBin: string): Promise<number> {
  const r = await runCommand(javaBin, ["-version"], { timeoutMs: 20_000 });
  const m = /version "(\d+)(?:\.(\d+))?/.exec(r.stderr + r.stdout);
  if (!m) return 0;
  return m[1] === "1" ? Number(m[2]) : Number(m[1]);
}

/** Installs a Debian package when `command` is missing (the project installs what it needs). */
export async function ensureDebianPackage(command: string, pkg: string): Promise<void> {
  const which = await runCommand("sh", ["-c", `command -v ${command}`]);
  if (which.code === 0) return;
  await runCommand("apt-get", ["update", "-qq"], { timeoutMs: 300_000 });
  const r = await runCommand("apt-get", ["install", "-y", "-qq", pkg], {
    timeoutMs: 600_000,
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (r.code !== 0) throw new Error(`apt-get install ${pkg} failed: ${r.stderr.slice(-1000)}`);
}

/** A JDK/JRE home with java >= `min` and < 24 (Elasticsearch 8.x runs on 17..23). */
export async function findJavaHome(min: number, installed = false): Promise<string> {
  const candidates: string[] = [];
  if (process.env.ES_JAVA_HOME) candidates.push(process.env.ES_JAVA_HOME);
  if (process.env.JAVA_HOME) candidates.push(process.env.JAVA_HOME);
  const jvm = "/usr/lib/jvm";
  if (existsSync(jvm)) for (const d of readdirSync(jvm).sort()) candidates.push(join(jvm, d));
  const onPath = await runCommand("sh", ["-c", "command -v java"]);
  if (onPath.code === 0) candidates.push(dirname(dirname(realpathSync(onPath.stdout.trim()))));
  for (const home of candidates) {
    const bin = join(home, "bin", "java");
    if (!existsSync(bin)) continue;
    const major = await javaMajor(bin);
    if (major >= min && major < 24) return home;
  }
  if (installed) throw new Error(`no Java ${min}..23 found for Elasticsearch; set ES_JAVA_HOME`);
  await ensureDebianPackage("__no_such_command__", "openjdk-17-jre-headless");
  return findJavaHome(min, true);
}
