import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dockerEngineAnswers } from "./docker-engine.js";
import { findJavaHome } from "./java-home.js";
import { ensureMavenZip, ensureUnzipped, installBase, isRoot, livePid, runningNodes, waitUntilHealthy } from "./maven-node.js";
import { runCommand } from "./run-command.js";
import { engineVersion } from "./service-versions.js";
import type { ServiceRecord } from "./services-state.js";

/**
 * Elasticsearch server version used when none is given. The 8.x client speaks to it natively
 * and to 9.x through REST API compatibility (it sends `compatible-with=8`).
 */
export const DEFAULT_ES_VERSION = engineVersion("elasticsearch", "8").version;
const ES_USER = "tether-es";
const GROUP = "org.elasticsearch.distribution.integ-test-zip";

export interface EsHealth {
  status: string;
  version?: string;
}

/** One health probe; resolves undefined when nothing (or not Elasticsearch) answers. */
export async function probeElasticsearch(url: string, timeoutMs = 2_000): Promise<EsHealth | undefined> {
  try {
    const res = await fetch(new URL("/_cluster/health", url), { signal: AbortSignal.timeout(timeoutMs) });
    if (res.headers.get("x-elastic-product") !== "Elasticsearch") return undefined;
    const body = (await res.json()) as { status?: string };
    return body.status ? { status: body.status } : undefined;
  } catch {
    return undefined;
  }
}

export async function waitForElasticsearch(url: string, timeoutMs = 120_000): Promise<EsHealth> {
  return waitUntilHealthy("Elasticsearch", url, probeElasticsearch, timeoutMs);
}

/** Pids of Elasticsearch nodes started from this checkout's install folders that are still alive. */
export function runningMavenNodes(): number[] {
  return runningNodes("elasticsearch", "es.pid");
}

/** An unpacked distribution the service user can run, and a Java for it. */
export interface EsInstall {
  version: string;
  home: string;
  base: string;
  javaHome: string;
  /** True when nodes must be started as the service user (we are root). */
  asServiceUser: boolean;
  serviceUser: string;
}

/** Fetches (once, through Maven) and unpacks (once) the integ-test distribution. */
export async function installElasticsearch(version: string = DEFAULT_ES_VERSION): Promise<EsInstall> {
  const base = await installBase("elasticsearch", ES_USER);
  const home = join(base, `elasticsearch-${version}`);
  const { java } = engineVersion("elasticsearch", version);
  const javaHome = await findJavaHome(java.min, java.max);
  await ensureUnzipped(() => ensureMavenZip(GROUP, "elasticsearch", version), base, home, "elasticsearch");
  return { version, home, base, javaHome, asServiceUser: isRoot(), serviceUser: ES_USER };
}

export interface MavenEsOptions {
  /** A full version or a major ("9"); default DEFAULT_ES_VERSION. */
  version?: string;
  /** Default: the version's own port (9200 for 8.x, 9220 for 9.x; see service-versions.ts). */
  port?: number;
  heap?: string;
}

/** Installs (once) and starts Elasticsearch from Maven Central's integ-test-zip, on loopback. */
export async function startMavenElasticsearch(opts: MavenEsOptions = {}): Promise<ServiceRecord> {
  const { version, port: versionPort } = engineVersion("elasticsearch", opts.version ?? DEFAULT_ES_VERSION);
  const port = opts.port ?? versionPort;
  const url = `http://127.0.0.1:${port}`;
  const base = await installBase("elasticsearch", ES_USER);
  const home = join(base, `elasticsearch-${version}`);
  const pidFile = join(home, "es.pid");

  const running = await probeElasticsearch(url);
  if (running) {
    const pid = livePid(pidFile);
    return pid
      ? { url, via: "maven", detail: `Elasticsearch ${version} already running from ${home}, pid ${pid}`, startedByUs: { pid } }
      : { url, via: "local", detail: `an Elasticsearch already answering at ${url}, not started from this checkout (down leaves it running)` };
  }

  const { javaHome } = await installElasticsearch(version);
  writeFileSync(
    join(home, "config", "elasticsearch.yml"),
    [
      "# Written by scripts/services: a single loopback node for tests and the quick start.",
      "cluster.name: tether-dev",
      "discovery.type: single-node",
      "network.host: 127.0.0.1",
      `http.port: ${port}`,
      "transport.port: 9300-9399",
      "xpack.security.enabled: false",
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
    const own = await runCommand("chown", ["-R", `${ES_USER}:`, home]);
    if (own.code !== 0) throw new Error(`chown ${home} failed: ${own.stderr}`);
  }
  const env = { ...process.env, ES_JAVA_HOME: javaHome, ES_JAVA_OPTS: `-Xms${opts.heap ?? process.env.TETHER_ES_HEAP ?? "1g"} -Xmx${opts.heap ?? process.env.TETHER_ES_HEAP ?? "1g"}` };
  const cmd = join(home, "bin", "elasticsearch");
  const start = isRoot()
    ? await runCommand("runuser", ["-u", ES_USER, "--", cmd, "-d", "-p", pidFile], { env, timeoutMs: 300_000 })
    : await runCommand(cmd, ["-d", "-p", pidFile], { env, timeoutMs: 300_000 });
  if (start.code !== 0) {
    throw new Error(`Elasticsearch ${version} failed to start (exit ${start.code}); see ${join(home, "logs")}: ${(start.stdout + start.stderr).slice(-2000)}`);
  }
  // A guard against a node that never comes up, not a limit on a slow start: four nodes booting
  // side by side on two busy cores (scripts/test) have taken close to three minutes.
  await waitForElasticsearch(url, 300_000);
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  return { url, via: "maven", detail: `Elasticsearch ${version} (integ-test-zip via Maven) in ${home}, pid ${pid}`, startedByUs: { pid } };
}

/**
 * Finds an Elasticsearch: ELASTICSEARCH_URL if given; else testcontainers when a Docker engine
 * answers; else the Maven Central distribution, started locally.
 */
export async function ensureElasticsearch(opts: MavenEsOptions & { keepContainer?: boolean } = {}): Promise<ServiceRecord> {
  const fromEnv = process.env.ELASTICSEARCH_URL;
  if (fromEnv) {
    const h = await waitForElasticsearch(fromEnv, 60_000);
    return { url: fromEnv, via: "env", detail: `Elasticsearch from ELASTICSEARCH_URL (status ${h.status})` };
  }
  if (await dockerEngineAnswers()) {
    const { ElasticsearchContainer } = await import("@testcontainers/elasticsearch");
    let builder = new ElasticsearchContainer(`docker.elastic.co/elasticsearch/elasticsearch:${opts.version ?? DEFAULT_ES_VERSION}`)
      .withEnvironment({ "xpack.security.enabled": "false", ES_JAVA_OPTS: "-Xms512m -Xmx512m" });
    if (opts.keepContainer) builder = builder.withReuse();
    const c = await builder.start();
    const url = c.getHttpUrl();
    await waitForElasticsearch(url);
    return { url, via: "testcontainers", detail: `Elasticsearch in container ${c.getId().slice(0, 12)}`, startedByUs: { containerId: c.getId() } };
  }
  return startMavenElasticsearch({ ...opts, port: opts.port ?? Number(process.env.TETHER_ES_PORT ?? 9200) });
}
