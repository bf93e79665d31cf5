import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { createDb, migrate, rowVersion, desiredOperation, type SinkOperation } from "@tether/core/internal";
import { annotationMigrations, annotations, type AnnotationRow } from "@tether/annotations";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { createScratchDatabase, ensureElasticsearch, ensurePostgres } from "@tether/testkit";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));

export interface MillionOptions {
  rows: number;
  /** Drifted entities injected before verifying (documents deleted, rows edited and inserted behind tether's back). */
  drift: number;
  keep: boolean;
  log: (line: string) => void;
}

interface Measured {
  code: number | null;
  wallMs: number;
  peakRssMb: number;
  stdout: string;
  stderr: string;
}

/** Runs a command under GNU time to read its peak RSS ("Maximum resident set size"). */
function measure(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Measured> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn("/usr/bin/time", ["-v", cmd, ...args], { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => {
      const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? "0");
      resolve({ code, wallMs: performance.now() - started, peakRssMb: Math.round(kb / 1024), stdout, stderr });
    });
  });
}

/**
 * Loads `rows` annotations with one INSERT … SELECT generate_series, indexes them through the
 * sink's bulk path, optionally injects drift, then measures `tether verify` (time, peak RSS).
 */
export async function runMillion(opts: MillionOptions): Promise<Record<string, unknown>> {
  const baseUrl = process.env.DATABASE_URL ?? (await ensurePostgres()).url;
  const esUrl = process.env.ELASTICSEARCH_URL ?? (await ensureElasticsearch()).url;
  const run = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  const database = `tether_v1m_${run}`;
  const indexPrefix = `v1m_${run}_`;
  const scratch = await createScratchDatabase(baseUrl, database);
  const databaseUrl = scratch.url;
  const db = createDb({ connectionString: databaseUrl, max: 4 });
  const sink = new ElasticsearchSink({ client: esUrl, indexPrefix, requestTimeoutMs: 120_000 });
  try {
    await migrate(db, [annotationMigrations]);
    // Bulk loading: no replicas and no refreshes while writing.
    await sink.client.indices.create({
      index: sink.indexName(annotations.index),
      settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: "-1" },
      mappings: { ...(annotations.mappings as object), properties: { ...((annotations.mappings as { properties: object }).properties), tether: { properties: { version: { type: "long" }, hash: { type: "long" }, deleted: { type: "boolean" }, key: { type: "long" } } } } } as never,
    });

    let t = performance.now();
    await sql`
      INSERT INTO annotation (userid, groupid, target_uri, text, tags, created, updated)
      SELECT 'acct:user' || (g % 5000) || '@example.com', CASE WHEN g % 10 = 0 THEN 'group' || (g % 50) ELSE '__world__' END,
             'https://example.com/page/' || (g % 20000), 'annotation number ' || g, ARRAY['t' || (g % 7)],
             now() - (g || ' seconds')::interval, now() - (g || ' seconds')::interval
      FROM generate_series(1, ${opts.rows}) AS g`.execute(db);
    await sql`ANALYZE annotation`.execute(db);
    const loadMs = performance.now() - t;
    opts.log(`[verify-1m] inserted ${opts.rows} rows in ${Math.round(loadMs)} ms`);

    // Index through the sink (the same bulk path the drainer uses), pages of 5000, two in flight.
    t = performance.now();
    let after = "0";
    let indexed = 0;
    const inflight = new Set<Promise<void>>();
    for (;;) {
      const page = await sql<AnnotationRow>`SELECT * FROM annotation WHERE id > ${after}::bigint ORDER BY annotation.id LIMIT 5000`.execute(db);
      if (page.rows.length === 0) break;
      after = String(page.rows[page.rows.length - 1]!.id);
      const ops: SinkOperation[] = page.rows.map((r) => desiredOperation(annotations, String(r.id), r, rowVersion(annotations, r)));
      const p = sink.write(annotations.index, ops, { retries: 5, timeoutMs: 120_000 }).then((res) => {
        const bad = res.filter((x) => x.status !== "ok");
        if (bad.length > 0) throw new Error(`indexing failed for ${bad.length} items, e.g. ${JSON.stringify(bad[0])}`);
        indexed += res.length;
      });
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      if (inflight.size >= 2) await Promise.race(inflight);
      if (indexed % 100_000 < 5_000) opts.log(`[verify-1m] indexed ${indexed}`);
    }
    await Promise.all(inflight);
    await sink.client.indices.putSettings({ index: sink.indexName(annotations.index), settings: { refresh_interval: "1s" } });
    await sink.refreshIndex(annotations.index);
    const indexMs = performance.now() - t;
    opts.log(`[verify-1m] indexed ${indexed} documents in ${Math.round(indexMs)} ms`);

    // Drift behind tether's back, spread over the id range.
    const step = Math.max(1, Math.floor(opts.rows / Math.max(1, opts.drift)));
    const third = Math.floor(opts.drift / 3);
    for (let i = 0; i < third; i++) await sink.client.delete({ index: sink.indexName(annotations.index), id: String(1 + i * step) });
    if (third > 0) {
      await sql`UPDATE annotation SET text = 'edited by a migration', version = version + 1
        WHERE id IN (SELECT 2 + g * ${step} FROM generate_series(0, ${third - 1}) g)`.execute(db);
      await sql`INSERT INTO annotation (userid, target_uri, text) SELECT 'acct:migration@example.com', 'https://example.com/m', 'raw ' || g FROM generate_series(1, ${opts.drift - 2 * third}) g`.execute(db);
    }

    const args = ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", "verify", "--json", "--no-enqueue"];
    const env = { ...process.env, DATABASE_URL: databaseUrl, ELASTICSEARCH_URL: esUrl, TETHER_INDEX_PREFIX: indexPrefix, LOG_LEVEL: "warn" };
    opts.log(`[verify-1m] running: DATABASE_URL=… TETHER_INDEX_PREFIX=${indexPrefix} node ${args.join(" ")}`);
    const m = await measure(process.execPath, args, env);
    if (m.code !== 0) throw new Error(`tether verify failed (${m.code}): ${m.stderr.slice(-2000)}`);
    const report = JSON.parse(m.stdout) as { collections: Record<string, unknown>[] };
    return {
      rows: opts.rows,
      insertMs: Math.round(loadMs),
      indexMs: Math.round(indexMs),
      injectedDrift: opts.drift,
      verify: { wallMs: Math.round(m.wallMs), peakRssMb: m.peakRssMb, report: report.collections[0] },
      command: `/usr/bin/time -v node ${args.join(" ")}`,
      database: opts.keep ? database : undefined,
      indexPrefix: opts.keep ? indexPrefix : undefined,
    };
  } finally {
    await db.destroy();
    if (!opts.keep) {
      await fetch(new URL(`/${indexPrefix}*?expand_wildcards=all`, esUrl), { method: "DELETE" }).catch(() => undefined);
      await scratch.drop();
    }
    await sink.close();
  }
}

/** Command line of scripts/verify-1m.ts: `--rows N` (default 1000000), `--drift N` (default 30), `--keep`. */
export async function millionMain(argv: readonly string[]): Promise<number> {
  const arg = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const rows = Number(arg("--rows") ?? "1000000");
  const drift = Number(arg("--drift") ?? "30");
  if (!Number.isSafeInteger(rows) || rows < 1 || !Number.isSafeInteger(drift) || drift < 0) {
    process.stderr.write("usage: scripts/verify-1m.ts [--rows 1000000] [--drift 30] [--keep]\n");
    return 2;
  }
  const result = await runMillion({ rows, drift, keep: argv.includes("--keep"), log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}
