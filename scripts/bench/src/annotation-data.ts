import { sql, type Kysely } from "kysely";
import { type AnnotationRow } from "@tether/annotations";
import { plainAnnotations } from "./plain-annotations.js";
import { deleteIndex, type BenchSink } from "./bench-engine.js";

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

/** Deletes (if present) and recreates a logical index with the annotation mapping. */
export async function resetIndex(sink: BenchSink, logical: string): Promise<void> {
  await deleteIndex(sink, logical);
  await sink.ensureIndex(logical, plainAnnotations.mappings);
}
