import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dockerEngineAnswers } from "./docker-engine.js";
import { findJavaHome } from "./java-home.js";
import { ensureMavenZip, ensureServiceUser, ensureUnzipped, installBase, isRoot, livePid, runDaemonStart, runningNodes, waitUntilHealthy } from "./maven-node.js";
import { runCommand } from "./run-command.js";
import { engineVersion } from "./service-versions.js";
import type { ServiceRecord } from "./services-state.js";

/**
 * OpenSearch server version used when none is given. 2.19 is the line that still runs on Java
 * 17 (3.x needs 21+); the 3.x client speaks to 2.x and 3.x servers.
 */
export const DEFAULT_OPENSEARCH_VERSION = engineVersion("opensearch", "2").version;
/** Its own port, so it sits beside an Elasticsearch on 9200. */
export const DEFAULT_OPENSEARCH_PORT = 9201;
const OS_USER = "tether-os";
const GROUP = "org.opensearch.distribution.integ-test-zip";
const PID_FILE = "opensearch.pid";

export interface OpenSearchHealth {
  status: string;
  version: string;
}

/** One probe; resolves undefined when nothing (or not OpenSearch) answers. */
export async function probeOpenSearch(url: string, timeoutMs = 2_000): Promise<OpenSearchHealth | undefined> {
  try {
    // The root answers with the distribution's name: an Elasticsearch on the same port is not taken for it.
    const root = await fetch(new URL("/", url), { signal: AbortSignal.timeout(timeoutMs) });
    const info = (await root.json()) as { version?: { distribution?: string; number?: string } };
    if (info.version?.distribution !== "opensearch") return undefined;
    const res = await fetch(new URL("/_cluster/health", url), { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { status?: string };
    return body.status ? { status: body.status, version: info.version.number ?? "?" } : undefined;
  } catch {
    return undefined;
  }
}

export async function waitForOpenSearch(url: string, timeoutMs = 120_000): Promise<OpenSearchHealth> {
  return waitUntilHealthy("OpenSearch", url, probeOpenSearch, timeoutMs);
}

/** Pids of OpenSearch nodes started from this checkout's install folders that are still alive. */
export function runningOpenSearchNodes(): number[] {
  return runningNodes("opensearch", PID_FILE);
}

export interface MavenOpenSearchOptions {
  /** A full version or a major ("3"); default DEFAULT_OPENSEARCH_VERSION. */
  version?: string;
  /** Default: the version's own port (9201 for 2.x, 9221 for 3.x; see service-versions.ts). */
  port?: number;
  heap?: string;
}

/**
 * Installs (once) and starts OpenSearch from Maven Central's integ-test-zip, on loopback. That
 * distribution carries the core server and transport-netty4 only: no security plugin (so
 * nothing to switch off), no analysis-common, painless or reindex.
 */
export async function startMavenOpenSearch(opts: MavenOpenSearchOptions = {}): Promise<ServiceRecord> {
  const { version, port: versionPort, java } = engineVersion("opensearch", opts.version ?? DEFAULT_OPENSEARCH_VERSION);
  const port = opts.port ?? versionPort;
  const url = `http://127.0.0.1:${port}`;
  const base = await installBase("opensearch", OS_USER);
  const home = join(base, `opensearch-${version}`);
  const pidFile = join(home, PID_FILE);

  const running = await probeOpenSearch(url);
  if (running) {
    const pid = livePid(pidFile);
    return pid
      ? { url, via: "maven", detail: `OpenSearch ${running.version} already running from ${home}, pid ${pid}`, startedByUs: { pid } }
      : { url, via: "local", detail: `an OpenSearch ${running.version} already answering at ${url}, not started from this checkout (down leaves it running)` };
  }

  const javaHome = await findJavaHome(java.min, java.max);
  await ensureServiceUser(OS_USER);
  await ensureUnzipped(() => ensureMavenZip(GROUP, "opensearch", version), base, home, "opensearch");
  writeFileSync(
    join(home, "config", "opensearch.yml"),
    [
      "# Written by scripts/services: a single loopback node for tests and the quick start.",
      "cluster.name: tether-dev-opensearch",
      "discovery.type: single-node",
      "network.host: 127.0.0.1",
      `http.port: ${port}`,
      // Away from Elasticsearch's 9300-9399, so both run side by side.
      "transport.port: 9400-9499",
      "cluster.routing.allocation.disk.threshold_enabled: false",
      "action.destructive_requires_name: false",
      `path.data: ${join(home, "data")}`,
      `path.logs: ${join(home, "logs")}`,
      // Where snapshot repositories may live (the index-restore scenarios take and restore snapshots).
      `path.repo: ${join(home, "snapshots")}`,
      "",
    ].join("\n"),
  );
  if (isRoot()) {
    const own = await runCommand("chown", ["-R", `${OS_USER}:`, home]);
    if (own.code !== 0) throw new Error(`chown ${home} failed: ${own.stderr}`);
  }
  const heap = opts.heap ?? process.env.TETHER_OPENSEARCH_HEAP ?? "512m";
  const env = { ...process.env, OPENSEARCH_JAVA_HOME: javaHome, OPENSEARCH_JAVA_OPTS: `-Xms${heap} -Xmx${heap}` };
  const cmd = join(home, "bin", "opensearch");
  const startLog = join(home, "logs", "start.out");
  const start = isRoot()
    ? await runDaemonStart("runuser", ["-u", OS_USER, "--", cmd, "-d", "-p", pidFile], env, startLog)
    : await runDaemonStart(cmd, ["-d", "-p", pidFile], env, startLog);
  if (start.code !== 0) {
    throw new Error(`OpenSearch ${version} failed to start (exit ${start.code}); see ${join(home, "logs")}: ${start.output}`);
  }
  // A guard against a node that never comes up, not a limit on a slow start: four nodes booting
  // side by side on two busy cores (scripts/test) have taken close to three minutes.
  await waitForOpenSearch(url, 300_000);
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  return { url, via: "maven", detail: `OpenSearch ${version} (integ-test-zip via Maven) in ${home}, pid ${pid}`, startedByUs: { pid } };
}

/**
 * Finds an OpenSearch: OPENSEARCH_URL if given; else testcontainers when a Docker engine
 * answers; else the Maven Central distribution, started locally (port TETHER_OPENSEARCH_PORT,
 * default 9201).
 */
export async function ensureOpenSearch(opts: MavenOpenSearchOptions & { keepContainer?: boolean } = {}): Promise<ServiceRecord> {
  const fromEnv = process.env.OPENSEARCH_URL;
  if (fromEnv) {
    const h = await waitForOpenSearch(fromEnv, 60_000);
    return { url: fromEnv, via: "env", detail: `OpenSearch ${h.version} from OPENSEARCH_URL (status ${h.status})` };
  }
  if (await dockerEngineAnswers()) {
    const { OpenSearchContainer } = await import("@testcontainers/opensearch");
    let builder = new OpenSearchContainer(`opensearchproject/opensearch:${opts.version ?? DEFAULT_OPENSEARCH_VERSION}`)
      .withSecurityEnabled(false)
      .withEnvironment({ OPENSEARCH_JAVA_OPTS: "-Xms512m -Xmx512m" });
    if (opts.keepContainer) builder = builder.withReuse();
    const c = await builder.start();
    const url = c.getHttpUrl();
    await waitForOpenSearch(url);
    return { url, via: "testcontainers", detail: `OpenSearch in container ${c.getId().slice(0, 12)}`, startedByUs: { containerId: c.getId() } };
  }
  return startMavenOpenSearch({ ...opts, port: opts.port ?? Number(process.env.TETHER_OPENSEARCH_PORT ?? DEFAULT_OPENSEARCH_PORT) });
}
