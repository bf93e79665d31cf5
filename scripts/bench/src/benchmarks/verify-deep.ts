import { sql, type Kysely } from "kysely";
import { deepVerifyCollection, verifyCollection } from "@tether/core";
import { plainAnnotations } from "../plain-annotations.js";
import { currentAnnotations } from "../current-annotations.js";
import type { Benchmark } from "../benchmark.js";
import { compare } from "../report.js";

const PAGE = 5_000;

/**
 * The floor of a deep comparison: scroll the whole index with bodies (same page size) and, per
 * page, select the rows by id from Postgres. No document is built or compared.
 */
async function rawScan(url: string, index: string, db: Kysely<any>): Promise<number> {
  const post = async (path: string, body: unknown) =>
    (await (await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json()) as {
      _scroll_id?: string;
      hits: { hits: { _id: string }[] };
    };
  let page = await post(`/${index}/_search?scroll=2m`, { size: PAGE, sort: ["_doc"], version: true });
  let n = 0;
  while (page.hits.hits.length > 0) {
    const ids = page.hits.hits.map((h) => h._id);
    await sql`SELECT * FROM annotation WHERE id = ANY(${ids}::bigint[])`.execute(db);
    n += ids.length;
    if (ids.length < PAGE) break;
    page = await post(`/_search/scroll`, { scroll: "2m", scroll_id: page._scroll_id });
  }
  if (page._scroll_id) await fetch(`${url}/_search/scroll`, { method: "DELETE", headers: { "content-type": "application/json" }, body: JSON.stringify({ scroll_id: page._scroll_id }) });
  return n;
}

export const verifyDeep: Benchmark = {
  name: "deep",
  title: "tether verify --deep (every document read, rebuilt from its row and compared) vs a raw scroll + row select; bucket count with far-away orphans",
  sinks: ["elasticsearch", "opensearch"],
  async run(scope) {
    const n = scope.sizes.verifyDocs;
    const { d, sink } = await currentAnnotations(scope, n);
    const deep: number[] = [];
    const raw: number[] = [];
    for (let rep = 0; rep < scope.sizes.reps; rep++) {
      let t = performance.now();
      const r = await deepVerifyCollection(d.db, sink, plainAnnotations, { enqueue: false, pageSize: PAGE });
      deep.push(n / ((performance.now() - t) / 1000));
      if (r.scanned !== n || r.driftedTotal !== 0) throw new Error(`deep verify read ${r.scanned}/${n}, drift ${r.driftedTotal}`);
      t = performance.now();
      const scanned = await rawScan(scope.env.esUrl, sink.indexName(plainAnnotations.index), d.db);
      raw.push(n / ((performance.now() - t) / 1000));
      if (scanned !== n) throw new Error(`raw scan read ${scanned}/${n}`);
      scope.log(`rep ${rep + 1}: deep verify ${deep.at(-1)!.toFixed(0)} docs/s, raw scan ${raw.at(-1)!.toFixed(0)} docs/s`);
    }
    // A few orphans (documents Postgres never had) far above the id range.
    const far = [1e12, 5e12, 9e12].map((k) => String(k));
    await sink.write(plainAnnotations.index, far.map((id) => ({ kind: "index" as const, id, version: 1, document: { text: "far orphan" } })));
    const buckets = await verifyCollection(d.db, sink, plainAnnotations, { enqueue: false });
    if (buckets.drifted.ghost !== far.length) throw new Error(`bucketed verify found ${buckets.drifted.ghost}/${far.length} far orphans`);
    scope.log(`bucketed verify of ${n} rows + ${far.length} far orphans: ${buckets.bucketsCompared} buckets compared, ${buckets.bucketsDiffering} differing`);
    return {
      rows: [
        compare({
          bench: "deep",
          metric: `deep verify, N=${n} (goal ≥ 20k docs/s at 1M)`,
          unit: "docs/s",
          better: "higher",
          tether: deep,
          baselineName: "raw scroll + row select",
          baseline: raw,
          note: `${PAGE} a page; tether rebuilds each document from its row and compares content hashes. Bucketed verify of the same ${n} rows with ${far.length} orphans at 1e12–9e12: ${buckets.bucketsCompared} buckets compared (${buckets.bucketsDiffering} differing, ${buckets.leavesCompared} leaf), ${(buckets.durationMs / 1000).toFixed(2)} s`,
        }),
      ],
      info: { docs: n, bucketsCompared: buckets.bucketsCompared, bucketsDiffering: buckets.bucketsDiffering },
    };
  },
};
