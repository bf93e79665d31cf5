/**
 * `scripts/services up [postgres|elasticsearch|opensearch …]|down|status|env [--json]`:
 * provisions the real Postgres, Elasticsearch and OpenSearch that tests and the quick start use
 * (all three when none is named), and says which way each was obtained.
 */
import { ensureElasticsearch, probeElasticsearch, runningMavenNodes } from "./elasticsearch-service.js";
import { ensureOpenSearch, probeOpenSearch, runningOpenSearchNodes } from "./opensearch-service.js";
import { ensurePostgres, redact, waitForPostgres } from "./postgres-service.js";
import { runCommand } from "./run-command.js";
import { clearServicesState, readServicesState, writeServicesState, type ServiceRecord, type ServicesState } from "./services-state.js";

type ServiceName = keyof ServicesState;
const SERVICES: readonly ServiceName[] = ["postgres", "elasticsearch", "opensearch"];
const ENSURE: Record<ServiceName, () => Promise<ServiceRecord>> = {
  postgres: () => ensurePostgres({ keepContainer: true }),
  elasticsearch: () => ensureElasticsearch({ keepContainer: true }),
  opensearch: () => ensureOpenSearch({ keepContainer: true }),
};
const ENV_VAR: Record<ServiceName, string> = { postgres: "DATABASE_URL", elasticsearch: "ELASTICSEARCH_URL", opensearch: "OPENSEARCH_URL" };

function parseNames(args: string[]): ServiceName[] {
  const names = args.filter((a) => !a.startsWith("--"));
  for (const n of names) if (!SERVICES.includes(n as ServiceName)) throw new Error(`unknown service "${n}"; use ${SERVICES.join(" | ")}`);
  return names.length ? (names as ServiceName[]) : [...SERVICES];
}

async function up(names: ServiceName[]): Promise<ServicesState> {
  const records = await Promise.all(names.map(async (n) => [n, await ENSURE[n]()] as const));
  // Keeps what an earlier `up` of other services recorded.
  const state: ServicesState = { ...readServicesState(), ...Object.fromEntries(records) };
  writeServicesState(state);
  return Object.fromEntries(records);
}

function stopPid(name: string, pid: number, done: string[]): void {
  try {
    process.kill(pid, "SIGTERM");
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
    if (rec.startedByUs.pid) stopPid(name, rec.startedByUs.pid, done);
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
  clearServicesState();
  return done;
}

const HEALTHY: Record<ServiceName, (url: string) => Promise<boolean>> = {
  postgres: (url) => waitForPostgres(url, 2_000).then(() => true, () => false),
  elasticsearch: async (url) => (await probeElasticsearch(url)) !== undefined,
  opensearch: async (url) => (await probeOpenSearch(url)) !== undefined,
};

async function status(): Promise<Record<string, unknown>> {
  const state = readServicesState();
  const out: Record<string, unknown> = {};
  for (const n of SERVICES) {
    const rec = state[n];
    out[n] = rec ? { ...rec, url: redact(rec.url), healthy: await HEALTHY[n](rec.url) } : "not provisioned";
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
    const s = await up(parseNames(rest));
    const entries = Object.entries(s) as [ServiceName, ServiceRecord][];
    print(json, s, [
      ...entries.map(([n, r]) => `${n.padEnd(14)} ${redact(r.url)}  via ${r.via}: ${r.detail}`),
      `export ${entries.map(([n, r]) => `${ENV_VAR[n]}=${r.url}`).join(" ")}`,
    ]);
  } else if (verb === "down") {
    const d = await down();
    print(json, d, d.length ? d : ["nothing this project started is running"]);
  } else if (verb === "status") {
    const s = await status();
    print(json, s, Object.entries(s).map(([k, v]) => `${k.padEnd(14)} ${typeof v === "string" ? v : `${(v as { url: string }).url}  via ${(v as { via: string }).via}  healthy=${(v as { healthy: boolean }).healthy}  ${(v as { detail: string }).detail}`}`));
  } else if (verb === "env") {
    const s = readServicesState();
    if (!s.postgres || !s.elasticsearch) throw new Error("services are not up: run `scripts/services up`");
    console.log(SERVICES.flatMap((n) => (s[n] ? [`${ENV_VAR[n]}=${s[n].url}`] : [])).join("\n"));
  } else {
    throw new Error(`unknown verb "${verb}"; use up [service…] | down | status | env`);
  }
} catch (err) {
  console.error(`services ${verb}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
