import type { Kysely } from "kysely";
import { contentHash } from "@tether/core";
import type { AnnotationRow } from "@tether/annotations";
import { plainAnnotations } from "./plain-annotations.js";
import { documentMeta, ElasticsearchSink } from "@tether/elasticsearch";
import { OpenSearchSink } from "@tether/opensearch";
import { annotationRows } from "./annotation-data.js";

/** The sinks a benchmark can measure; `--sink` picks one (default elasticsearch). */
export type BenchSinkKind = "elasticsearch" | "opensearch";
export type BenchSink = ElasticsearchSink | OpenSearchSink;

export function benchSink(kind: BenchSinkKind, url: string, indexPrefix: string): BenchSink {
  return kind === "opensearch" ? new OpenSearchSink({ client: url, indexPrefix }) : new ElasticsearchSink({ client: url, indexPrefix });
}

/*
 * The baselines talk to the engine with its own official client, as a team without tether
 * would: the two clients differ in shape (the OpenSearch one wraps answers in `body`), so each
 * call is written once per client here.
 */

export async function deleteIndex(sink: BenchSink, logical: string): Promise<void> {
  // After a rebuild the name is an alias: remove the indices behind it.
  const layout = await sink.indexLayout(logical);
  if (layout.kind === "alias") {
    for (const i of layout.indices) await deleteIndex(sink, i);
    return;
  }
  const index = sink.indexName(logical);
  if (sink instanceof OpenSearchSink) await sink.client.indices.delete({ index }, { ignore: [404] });
  else await sink.client.indices.delete({ index }, { ignore: [404] });
}

export async function countDocs(sink: BenchSink, logical: string): Promise<number> {
  await sink.refreshIndex(logical);
  const index = sink.indexName(logical);
  if (sink instanceof OpenSearchSink) return Number((await sink.client.count({ index })).body.count);
  return (await sink.client.count({ index })).count;
}

/** A plain realtime `_mget` of the metadata; resolves with the number of entries answered. */
export async function rawMget(sink: BenchSink, logical: string, ids: string[]): Promise<number> {
  const index = sink.indexName(logical);
  if (sink instanceof OpenSearchSink) return (await sink.client.mget({ index, realtime: true, _source_includes: ["tether.deleted"], body: { ids } })).body.docs.length;
  return (await sink.client.mget({ index, ids, realtime: true, _source_includes: ["tether.deleted"] })).docs.length;
}

/**
 * The raw rate: the same documents tether writes (body + `tether` metadata, external version)
 * streamed from Postgres through the client's own `helpers.bulk` (defaults: 5 MB flushes,
 * concurrency 5).
 */
export async function rawBulk(sink: BenchSink, logical: string, db: Kysely<any>): Promise<{ docs: number; failed: number }> {
  const index = sink.indexName(logical);
  // As the sink writes it: the metadata and the content hash of the body (what a drain pass compares).
  const body = (row: AnnotationRow) => {
    const document = plainAnnotations.toDocument(row);
    return { ...document, tether: { ...documentMeta(row.id, Number(row.version), false), content: contentHash(document) } };
  };
  const operation = (row: AnnotationRow) => [{ index: { _index: index, _id: row.id, version: Number(row.version), version_type: "external" as const } }, body(row)] as const;
  if (sink instanceof OpenSearchSink) {
    const stats = await sink.client.helpers.bulk({ datasource: annotationRows(db), onDocument: (row) => [...operation(row)] as never, refreshOnCompletion: false });
    return { docs: stats.successful, failed: stats.failed };
  }
  const stats = await sink.client.helpers.bulk<AnnotationRow>({
    datasource: annotationRows(db),
    onDocument: (row) => [...operation(row)],
    refreshOnCompletion: false,
  });
  return { docs: stats.successful, failed: stats.failed };
}

/** Live documents of a logical index whose `field` matches `text` (after a refresh). */
export async function countMatching(sink: BenchSink, logical: string, field: string, text: string): Promise<number> {
  await sink.refreshIndex(logical);
  const index = sink.indexName(logical);
  const query = { match: { [field]: text } };
  if (sink instanceof OpenSearchSink) return Number((await sink.client.count({ index, body: { query } })).body.count);
  return (await sink.client.count({ index, query })).count;
}
