/**
 * `scripts/services up|down|status [--json]`: provisions the real Postgres and Elasticsearch
 * that tests and the quick start use, and says which way each was obtained.
 */
import { ensureElasticsearch, probeElasticsearch, runningMavenNodes } from "./elasticsearch-service.js";
import { ensurePostgres, redact, waitForPostgres } from "./postgres-service.js";
import { runCommand } from "./run-command.js";
import { clearServicesState, readServicesState, writeServicesState, type ServicesState } from "./services-state.js";

async function up(): Promise<Required<ServicesState>> {
  const [postgres, elasticsearch] = await Promise.all([
    ensurePostgres({ keepContainer: true }),
    ensureElasticsearch({ keepContainer: true }),
  ]);
  const state = { postgres, elasticsearch };
  writeServicesState(state);
  return state;
}

async function down(): Promise<string[]> {
  const state = readServicesState();
  const done: string[] = [];
  for (const [name, rec] of Object.entries(state)) {
    if (!rec?.startedByUs) continue;
    if (rec.startedByUs.pid) {
      try {
        process.kill(rec.startedByUs.pid, "SIGTERM");
        done.push(`${name}: stopped pid ${rec.startedByUs.pid}`);
      } catch {
        done.push(`${name}: pid ${rec.startedByUs.pid} was not running`);
      }
    }
    if (rec.startedByUs.containerId) {
      await runCommand("docker", ["rm", "-f", rec.startedByUs.containerId]);
      done.push(`${name}: removed container ${rec.startedByUs.containerId.slice(0, 12)}`);
    }
  }
  // Also any node started from this checkout that the state no longer names (e.g. a later `up`
  // with ELASTICSEARCH_URL given rewrote it).
  for (const pid of runningMavenNodes()) {
    if (Object.values(state).some((rec) => rec?.startedByUs?.pid === pid)) continue;
    process.kill(pid, "SIGTERM");
    done.push(`elasticsearch: stopped pid ${pid}`);
  }
  clearServicesState();
  return done;
}

async function status(): Promise<Record<string, unknown>> {
  const state = readServicesState();
  const pgOk = state.postgres ? await waitForPostgres(state.postgres.url, 2_000).then(() => true, () => false) : false;
  const esOk = state.elasticsearch ? (await probeElasticsearch(state.elasticsearch.url)) !== undefined : false;
  return {
    postgres: state.postgres ? { ...state.postgres, url: redact(state.postgres.url), healthy: pgOk } : "not provisioned",
    elasticsearch: state.elasticsearch ? { ...state.elasticsearch, healthy: esOk } : "not provisioned",
  };
}

function print(json: boolean, value: unknown, lines: string[]): void {
  if (json) console.log(JSON.stringify(value, null, 2));
  else for (const l of lines) console.log(l);
}

const [verb = "status", ...rest] = process.argv.slice(2);
const json = rest.includes("--json");
try {
  if (verb === "up") {
    const s = await up();
    print(json, s, [
      `postgres       ${redact(s.postgres.url)}  via ${s.postgres.via}: ${s.postgres.detail}`,
      `elasticsearch  ${s.elasticsearch.url}  via ${s.elasticsearch.via}: ${s.elasticsearch.detail}`,
      `export DATABASE_URL=${s.postgres.url} ELASTICSEARCH_URL=${s.elasticsearch.url}`,
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
    console.log(`DATABASE_URL=${s.postgres.url}\nELASTICSEARCH_URL=${s.elasticsearch.url}`);
  } else {
    throw new Error(`unknown verb "${verb}"; use up | down | status | env`);
  }
} catch (err) {
  console.error(`services ${verb}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
