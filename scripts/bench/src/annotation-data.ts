import { sql, type Kysely } from "kysely";
import type { Client } from "@elastic/elasticsearch";
import { annotations, type AnnotationRow } from "@tether/annotations";
import { documentMeta, type ElasticsearchSink } from "@tether/elasticsearch";

/** Inserts `n` small annotations (version 1) with one INSERT … SELECT per million. */
export async function seedAnnotations(db: Kysely<any>, n: number): Promise<void> {
  for (let from = 1; from <= n; from += 1_000_000) {
    const to = Math.min(n, from + 999_999);
    await sql`
      INSERT INTO annotation (userid, groupid, target_uri, text, tags)
      SELECT 'acct:user' || (g % 1000) || '@example.com', CASE WHEN g % 10 = 0 THEN 'g' || (g % 50) ELSE '__world__' END,
             'https://example.com/page/' || (g % 5000), 'note number ' || g || ' about something', ARRAY['tag' || (g % 20)]
      FROM generate_series(${from}::int, ${to}::int) AS g`.execute(db);
  }
  await sql`ANALYZE annotation`.execute(db);
}

/** All annotation rows in id order, `batch` at a time (keyset pagination). */
export async function* annotationRows(db: Kysely<any>, batch = 5000): AsyncGenerator<AnnotationRow> {
  let after = "0";
  for (;;) {
    const rows = (await db.selectFrom("annotation").selectAll().where("id", ">", after).orderBy("id").limit(batch).execute()) as AnnotationRow[];
    for (const r of rows) yield r;
    if (rows.length < batch) return;
    after = rows[rows.length - 1]!.id;
  }
}

/**
 * The raw Elasticsearch rate: the same documents tether writes (body + `tether` metadata,
 * external version) streamed from Postgres through the client's `helpers.bulk` (defaults:
 * 5 MB flushes, concurrency 5).
 */
export async function rawBulk(client: Client, index: string, db: Kysely<any>): Promise<{ docs: number; failed: number }> {
  const stats = await client.helpers.bulk<AnnotationRow>({
    datasource: annotationRows(db),
    onDocument: (row) => [
      { index: { _index: index, _id: row.id, version: Number(row.version), version_type: "external" } },
      { ...annotations.toDocument(row), tether: documentMeta(row.id, Number(row.version), false) },
    ],
    refreshOnCompletion: false,
  });
  return { docs: stats.successful, failed: stats.failed };
}

/** Deletes (if present) and recreates a logical index with the annotation mapping. */
export async function resetIndex(sink: ElasticsearchSink, logical: string): Promise<void> {
  await sink.client.indices.delete({ index: sink.indexName(logical) }, { ignore: [404] });
  await sink.ensureIndex(logical, annotations.mappings);
}

export async function docCount(sink: ElasticsearchSink, logical: string): Promise<number> {
  await sink.refreshIndex(logical);
  const r = await sink.client.count({ index: sink.indexName(logical) });
  return r.count;
}
