import { startMavenElasticsearch, probeElasticsearch } from "./elasticsearch-service.js";
import { startMavenOpenSearch, probeOpenSearch } from "./opensearch-service.js";
import { ensurePostgres, waitForPostgres } from "./postgres-service.js";
import { startPrivatePostgres } from "./private-postgres.js";
import { engineVersion, postgresVersion } from "./service-versions.js";
import type { ServiceRecord } from "./services-state.js";

/** A service for one test run, and how to let it go when the run ends (nothing when it was already there). */
export interface Provisioned {
  record: ServiceRecord;
  release?: () => Promise<void>;
}

/** Resolves once process `pid` has exited (polled: it is not our child). */
async function exited(pid: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) throw new Error(`process ${pid} did not exit within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The engine of `product` at major `version` on that major's own port (service-versions.ts):
 * the node already answering there (from `scripts/services up elasticsearch@9`, say), kept
 * running; else one started from Maven Central's integ-test distribution for this run and
 * stopped when it ends.
 *
 * @example
 * const { record, release } = await ensureVersionedEngine("elasticsearch", "9");
 */
export async function ensureVersionedEngine(product: "elasticsearch" | "opensearch", version: string): Promise<Provisioned> {
  const v = engineVersion(product, version);
  const url = `http://127.0.0.1:${v.port}`;
  const probe = product === "elasticsearch" ? probeElasticsearch : probeOpenSearch;
  if (await probe(url)) {
    return { record: { url, via: "local", detail: `${product} ${v.major}.x already answering at ${url} (kept running)` } };
  }
  const opts = { version: v.version, port: v.port, heap: "512m" };
  const record = product === "elasticsearch" ? await startMavenElasticsearch(opts) : await startMavenOpenSearch(opts);
  const pid = record.startedByUs?.pid;
  return {
    record,
    release: async () => {
      if (!pid) return;
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        return;
      }
      await exited(pid);
    },
  };
}

/**
 * Postgres of major `version`: the machine's server when that is its major (DATABASE_URL's,
 * as `ensurePostgres` finds it); a server already answering on the major's own port (from
 * `scripts/services up postgres@14`), kept running; else a private server started for this run
 * and removed when it ends.
 */
export async function versionedPostgres(version: string): Promise<Provisioned> {
  const v = postgresVersion(version);
  if (v.version === "machine") return { record: await ensurePostgres() };
  const url = `postgres://postgres@127.0.0.1:${v.port}/postgres`;
  const running = await waitForPostgres(url, 1_000).catch(() => undefined);
  if (running?.startsWith(`${v.major}.`)) return { record: { url, via: "local", detail: `PostgreSQL ${running} already answering at port ${v.port} (kept running)` } };
  const server = await startPrivatePostgres({ version: v.version });
  return {
    record: { url: server.url, via: "maven", detail: `PostgreSQL ${v.version} (embedded-postgres-binaries via Maven), a private server for this run` },
    release: () => server.close(),
  };
}
