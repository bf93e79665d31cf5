import pg from "pg";
import type { Kysely } from "kysely";
import { createDb, migrate } from "@tether/core";
import { annotationMigrations } from "@tether/annotations";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { createScratchDatabase } from "@tether/testkit";
import { benchSink, type BenchSink, type BenchSinkKind } from "./bench-engine.js";
import type { Sizes } from "./options.js";

export interface BenchEnv {
  pgUrl: string;
  /** The engine under test: Elasticsearch, or OpenSearch with `--sink opensearch`. */
  sinkKind: BenchSinkKind;
  /** That engine's URL. */
  esUrl: string;
  /** Names this run's databases (`tether_bench_<run>_*`) and indices (`bench_<run>_*`). */
  runId: string;
  sizes: Sizes;
  log: (msg: string) => void;
}

export interface BenchDatabase {
  name: string;
  url: string;
  db: Kysely<any>;
}

/**
 * Everything one benchmark creates: fresh databases (`CREATE DATABASE`, then migrated), an
 * Elasticsearch index prefix, pools and sinks. `close()` drops and deletes all of it.
 */
export class BenchScope {
  readonly indexPrefix: string;
  private readonly cleanups: (() => Promise<unknown>)[] = [];
  private closed = false;

  constructor(
    readonly env: BenchEnv,
    readonly bench: string,
  ) {
    this.indexPrefix = `bench_${env.runId}_${bench}_`;
  }

  get sizes(): Sizes {
    return this.env.sizes;
  }

  log(msg: string): void {
    this.env.log(`[${this.bench}] ${msg}`);
  }

  /** Registers a cleanup; they run in reverse order. */
  defer(fn: () => Promise<unknown>): void {
    this.cleanups.push(fn);
  }

  /** An empty database of this run; unmigrated (peers install their own schema). */
  async rawDatabase(suffix: string, poolSize = 10): Promise<BenchDatabase> {
    // A database name is an identifier: a bench name's hyphens become underscores.
    const name = `tether_bench_${this.env.runId}_${this.bench.replace(/-/g, "_")}${suffix ? `_${suffix}` : ""}`;
    const scratch = await createScratchDatabase(this.env.pgUrl, name);
    this.defer(() => scratch.drop());
    const url = scratch.url;
    const db = createDb({ connectionString: url, max: poolSize, applicationName: `tether-bench-${this.bench}` });
    this.defer(() => db.destroy());
    return { name, url, db };
  }

  /** A fresh database with tether's and the annotation migrations applied. */
  async database(suffix = "", poolSize = 10): Promise<BenchDatabase> {
    const d = await this.rawDatabase(suffix, poolSize);
    await migrate(d.db, [annotationMigrations]);
    return d;
  }

  /** An Elasticsearch sink under this benchmark's index prefix (benchmarks of Elasticsearch only). */
  sink(url = this.env.esUrl): ElasticsearchSink {
    const s = new ElasticsearchSink({ client: url, indexPrefix: this.indexPrefix });
    this.defer(() => s.close());
    return s;
  }

  /** The sink `--sink` chose (Elasticsearch by default), under this benchmark's index prefix. */
  engineSink(url = this.env.esUrl): BenchSink {
    const s = benchSink(this.env.sinkKind, url, this.indexPrefix);
    this.defer(() => s.close());
    return s;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const errors: unknown[] = [];
    for (const fn of this.cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    }
    await fetch(new URL(`/${this.indexPrefix}*?expand_wildcards=all`, this.env.esUrl), { method: "DELETE" }).catch((err) => errors.push(err));
    if (errors.length > 0) this.log(`cleanup: ${errors.length} error(s), first: ${String(errors[0])}`);
  }
}

export async function adminQuery(pgUrl: string, text: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}
