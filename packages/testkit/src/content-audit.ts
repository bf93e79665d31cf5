import { sql, type Kysely } from "kysely";
import { contentHash, type Collection, type Sink } from "@tether/core";
import { loadRows } from "@tether/core/internal";

const PAGE = 1_000;

/**
 * Live rows whose document holds another body than the one the row builds now (the content hash
 * stored with the document against `contentHash(collection.toDocument(row))`), whatever the
 * versions say: a write confirmed against a document it never wrote. Rows through the
 * collection's `load` (its embeds), pages of ids in key order.
 */
export async function otherBodies(db: Kysely<any>, sink: Sink, collection: Collection<any>): Promise<string[]> {
  const other: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await sql<{ id: string }>`
      SELECT ${sql.ref(collection.idColumn)}::text AS id FROM ${sql.table(collection.table)}
      ${after === undefined ? sql`` : sql`WHERE ${sql.ref(collection.idColumn)} > ${after}`}
      ORDER BY ${sql.ref(collection.idColumn)} LIMIT ${PAGE}`.execute(db);
    if (page.rows.length === 0) return other;
    const ids = page.rows.map((r) => r.id);
    const [rows, states] = await Promise.all([loadRows(db, collection, ids), sink.fetchStates(collection.index, ids)]);
    for (const id of ids) {
      const row = rows.get(id);
      const state = states.get(id);
      if (!row || collection.isDeleted(row) || !state || state.deleted || state.content === undefined) continue;
      if (state.content !== contentHash(collection.toDocument(row))) other.push(id);
    }
    after = ids[ids.length - 1];
  }
}
