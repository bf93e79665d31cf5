/**
 * `scripts/services up [postgres|elasticsearch|opensearch|secure-elasticsearch …] [--version <v>]|down|status|env [--json]`:
 * provisions the real Postgres, Elasticsearch and OpenSearch that tests and the quick start use,
 * and the secured Elasticsearch (HTTPS with a private CA, users and roles) of the connection
 * tests (all four when none is named), and says which way each was obtained. Another major runs
 * beside the usual one on a port of its own (service-versions.ts): `up elasticsearch --version 9`
 * or `up elasticsearch@9 opensearch@3 postgres@17`.
 */
import { ensureElasticsearch, probeElasticsearch, runningMavenNodes, startMavenElasticsearch } from "./elasticsearch-service.js";
import { ensureOpenSearch, probeOpenSearch, runningOpenSearchNodes, startMavenOpenSearch } from "./opensearch-service.js";
import { ensurePostgres, redact, waitForPostgres } from "./postgres-service.js";
import { connect } from "node:net";
import { runCommand } from "./run-command.js";
import { ensureSecureElasticsearch } from "./secure-elasticsearch.js";
import { engineVersion, postgresVersion } from "./service-versions.js";
import { clearServicesState, readServicesState, writeServicesState, type ServiceRecord, type ServicesState } from "./services-state.js";
import { runningVersionedPostgres, startVersionedPostgres } from "./versioned-postgres.js";

type ServiceName = "postgres" | "elasticsearch" | "opensearch" | "secure-elasticsearch";
const SERVICES: readonly ServiceName[] = ["postgres", "elasticsearch", "opensearch", "secure-elasticsearch"];
const ENSURE: Record<ServiceName, () => Promise<ServiceRecord>> = {
  postgres: () => ensurePostgres({ keepContainer: true }),
  elasticsearch: () => ensureElasticsearch({ keepContainer: true }),
  opensearch: () => ensureOpenSearch({ keepContainer: true }),
  "secure-elasticsearch": async () => (await ensureSecureElasticsearch()).record,
};
const ENV_VAR: Record<ServiceName, string> = { postgres: "DATABASE_URL", elasticsearch: "ELASTICSEARCH_URL", opensearch: "OPENSEARCH_URL", "secure-elasticsearch": "TETHER_SECURE_ES_URL" };
/** The major each service has when none is named: the one its plain key (and its env variable) stands for. */
const DEFAULT_MAJOR: Record<ServiceName, number> = { postgres: 15, elasticsearch: 8, opensearch: 2, "secure-elasticsearch": 8 };

/** Whether something listens at the URL's port (the secured node answers only with its CA and a user). */
function listening(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: u.hostname, port: Number(u.port) }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/** One service to bring up: its name and, for another major than the default, that version. */
interface Wanted {
  name: ServiceName;
  version?: string;
}

const keyOf = (w: Wanted): keyof ServicesState => (w.version ? `${w.name}@${w.version.split(".")[0]}` : w.name);

function majorOf(name: ServiceName, version: string): number {
  if (name === "secure-elasticsearch") throw new Error("the secured Elasticsearch runs the default major only: name no version for it");
  return name === "postgres" ? postgresVersion(version).major : engineVersion(name, version).major;
}

function parseWanted(args: string[]): Wanted[] {
  const vi = args.indexOf("--version");
  const version = vi >= 0 ? args[vi + 1] : undefined;
  if (vi >= 0 && (!version || version.startsWith("--"))) throw new Error("--version needs a value, e.g. --version 9");
  const names = args.filter((a, i) => !a.startsWith("--") && !(vi >= 0 && i === vi + 1));
  if (version && names.length !== 1) throw new Error("--version applies to one service: name exactly one (or write service@version)");
  const wanted = (names.length ? names : [...SERVICES]).map((n): Wanted => {
    const [name, v = version] = n.split("@") as [string, string | undefined];
    if (!SERVICES.includes(name as ServiceName)) throw new Error(`unknown service "${name}"; use ${SERVICES.join(" | ")}`);
    const s = name as ServiceName;
    // The default major is the plain service (and honours its env variable); any other is versioned.
    return v === undefined || majorOf(s, v) === DEFAULT_MAJOR[s] ? { name: s } : { name: s, version: v };
  });
  return wanted;
}

function ensureWanted(w: Wanted): Promise<ServiceRecord> {
  if (!w.version) return ENSURE[w.name]();
  if (w.name === "postgres") return startVersionedPostgres({ version: w.version });
  if (w.name === "secure-elasticsearch") throw new Error("the secured Elasticsearch runs the default major only");
  return w.name === "elasticsearch" ? startMavenElasticsearch({ version: w.version }) : startMavenOpenSearch({ version: w.version });
}

async function up(wanted: Wanted[]): Promise<ServicesState> {
  const records = await Promise.all(wanted.map(async (w) => [keyOf(w), await ensureWanted(w)] as const));
  // Keeps what an earlier `up` of other services recorded.
  const state: ServicesState = { ...readServicesState(), ...Object.fromEntries(records) };
  writeServicesState(state);
  return Object.fromEntries(records);
}

function stopPid(name: string, pid: number, done: string[], signal: NodeJS.Signals = "SIGTERM"): void {
  try {
    process.kill(pid, signal);
    done.push(`${name}: stopped pid ${pid}`);
  } catch {
    done.push(`${name}: pid ${pid} was not running`);
  }
}

/** Stops only what this checkout started: recorded pids and containers, and nodes run from its own install folders. */
async function down(): Promise<string[]> {
  const state = readServicesState();
  const done: string[] = [];
  for (const [name, rec] of Object.entries(state)) {
    if (!rec?.startedByUs) continue;
    if (rec.startedByUs.pid) stopPid(name, rec.startedByUs.pid, done, rec.startedByUs.signal);
    if (rec.startedByUs.containerId) {
      await runCommand("docker", ["rm", "-f", rec.startedByUs.containerId]);
      done.push(`${name}: removed container ${rec.startedByUs.containerId.slice(0, 12)}`);
    }
  }
  // Also any node started from this checkout that the state no longer names (e.g. a later `up`
  // with ELASTICSEARCH_URL given rewrote it).
  const recorded = (pid: number) => Object.values(state).some((rec) => rec?.startedByUs?.pid === pid);
  for (const pid of runningMavenNodes()) if (!recorded(pid)) stopPid("elasticsearch", pid, done);
  for (const pid of runningOpenSearchNodes()) if (!recorded(pid)) stopPid("opensearch", pid, done);
  for (const pid of await runningVersionedPostgres()) if (!recorded(pid)) stopPid("postgres", pid, done, "SIGINT");
  clearServicesState();
  return done;
}

const HEALTHY: Record<ServiceName, (url: string) => Promise<boolean>> = {
  postgres: (url) => waitForPostgres(url, 2_000).then(() => true, () => false),
  elasticsearch: async (url) => (await probeElasticsearch(url)) !== undefined,
  opensearch: async (url) => (await probeOpenSearch(url)) !== undefined,
  "secure-elasticsearch": listening,
};

async function status(): Promise<Record<string, unknown>> {
  const state = readServicesState();
  const out: Record<string, unknown> = {};
  const keys = [...SERVICES, ...Object.keys(state).filter((k) => k.includes("@")).sort()] as (keyof ServicesState)[];
  for (const k of keys) {
    const rec = state[k];
    out[k] = rec ? { ...rec, url: redact(rec.url), healthy: await HEALTHY[String(k).split("@")[0] as ServiceName](rec.url) } : "not provisioned";
  }
  return out;
}

function print(json: boolean, value: unknown, lines: string[]): void {
  if (json) console.log(JSON.stringify(value, null, 2));
  else for (const l of lines) console.log(l);
}

const [verb = "status", ...rest] = process.argv.slice(2);
const json = rest.includes("--json");
try {
  if (verb === "up") {
    const s = await up(parseWanted(rest));
    const entries = Object.entries(s) as [string, ServiceRecord][];
    print(json, s, [
      ...entries.map(([n, r]) => `${n.padEnd(21)} ${redact(r.url)}  via ${r.via}: ${r.detail}`),
      `export ${entries.map(([n, r]) => `${ENV_VAR[n.split("@")[0] as ServiceName]}=${r.url}`).join(" ")}`,
    ]);
  } else if (verb === "down") {
    const d = await down();
    print(json, d, d.length ? d : ["nothing this project started is running"]);
  } else if (verb === "status") {
    const s = await status();
    print(json, s, Object.entries(s).map(([k, v]) => `${k.padEnd(21)} ${typeof v === "string" ? v : `${(v as { url: string }).url}  via ${(v as { via: string }).via}  healthy=${(v as { healthy: boolean }).healthy}  ${(v as { detail: string }).detail}`}`));
  } else if (verb === "env") {
    const s = readServicesState();
    if (!s.postgres || !s.elasticsearch) throw new Error("services are not up: run `scripts/services up`");
    console.log(SERVICES.flatMap((n) => (s[n] ? [`${ENV_VAR[n]}=${s[n].url}`] : [])).join("\n"));
  } else {
    throw new Error(`unknown verb "${verb}"; use up [service[@version]…] [--version <v>] | down | status | env`);
  }
} catch (err) {
  console.error(`services ${verb}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
