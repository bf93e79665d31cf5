import { hash } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { desiredOperation, rowVersion } from "@tether/core/internal";
import { bulkLines } from "@tether/search-sink";
import type { BenchSink } from "../bench-engine.js";
import { SCALE_COLLECTIONS, SCALE_TABLES, type ScaleIdType, type ScaleItemRow } from "./scale-items.js";

/** Bulk bodies of about this size, this many in flight. */
const BULK_BYTES = 5 * 2 ** 20;
const BULK_IN_FLIGHT = 3;

/** The uuid of item `g`: md5('item-' || g)::uuid in Postgres. */
function itemUuid(g: number): string {
  const h = hash("md5", `item-${g}`, "hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Id of item `g` of a table (g counts from 1). */
export function itemId(idType: ScaleIdType, g: number): string {
  return idType === "int" ? String(g) : itemUuid(g);
}

/** Row `g` exactly as Postgres returns it after `insertScaleRows` (what the drainer would load). */
export function scaleRow(idType: ScaleIdType, g: number): ScaleItemRow {
  return { id: itemId(idType, g), name: `item ${g}`, category: `c${g % 100}`, price: g % 10_000, version: "1", deleted_at: null };
}

/** SQL of item `g`'s id, the same as `itemId`. */
const idSql = (idType: ScaleIdType) => (idType === "int" ? sql`g::bigint` : sql`md5('item-' || g)::uuid`);

/**
 * Inserts items (from, to] with INSERT … SELECT generate_series, a million per statement, with
 * the primary key (and for uuid ids the bucket-key index verify reads ranges through) dropped
 * during the insert and built again after it.
 */
export async function insertScaleRows(db: Kysely<any>, idType: ScaleIdType, from: number, to: number): Promise<void> {
  const table = sql.table(SCALE_TABLES[idType]);
  const pk = sql.raw(`${SCALE_TABLES[idType]}_pkey`);
  const keyIdx = sql.raw(`${SCALE_TABLES[idType]}_entity_key_idx`);
  await sql`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${pk}`.execute(db);
  await sql`DROP INDEX IF EXISTS ${keyIdx}`.execute(db);
  for (let lo = from + 1; lo <= to; lo += 1_000_000) {
    const hi = Math.min(to, lo + 999_999);
    await sql`
      INSERT INTO ${table} (id, name, category, price)
      SELECT ${idSql(idType)}, 'item ' || g, 'c' || (g % 100), g % 10000
      FROM generate_series(${lo}::int, ${hi}::int) AS g`.execute(db);
  }
  await sql`ALTER TABLE ${table} ADD CONSTRAINT ${pk} PRIMARY KEY (id)`.execute(db);
  if (idType === "uuid") await sql`CREATE INDEX ${keyIdx} ON ${table} (tether.entity_key(id::text))`.execute(db);
  await sql`VACUUM ANALYZE ${table}`.execute(db);
}

/** Refreshes off and no replicas while loading; `done` puts the refresh back and refreshes. */
export async function loadSettings(engineUrl: string, index: string, loading: boolean): Promise<void> {
  const settings = loading ? { index: { refresh_interval: "-1", number_of_replicas: 0 } } : { index: { refresh_interval: null } };
  const r = await fetch(`${engineUrl}/${index}/_settings`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(settings) });
  if (!r.ok) throw new Error(`${index}/_settings: ${r.status} ${await r.text()}`);
  if (!loading) {
    const f = await fetch(`${engineUrl}/${index}/_refresh`, { method: "POST" });
    if (!f.ok) throw new Error(`${index}/_refresh: ${f.status} ${await f.text()}`);
  }
}

async function postBulk(engineUrl: string, body: string): Promise<void> {
  const r = await fetch(`${engineUrl}/_bulk?filter_path=errors,items.*.error`, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body });
  const text = await r.text();
  if (!r.ok) throw new Error(`_bulk: ${r.status} ${text.slice(0, 500)}`);
  const answer = JSON.parse(text) as { errors: boolean; items?: unknown[] };
  if (answer.errors) throw new Error(`_bulk item errors, first: ${JSON.stringify(answer.items?.[0])}`);
}

/**
 * Writes the documents of items (from, to] straight to the engine's `_bulk` (a few ~5 MiB
 * bodies in flight): each is the line the sink itself writes for that row (`bulkLines` of the
 * collection's `desiredOperation`), so verify finds them current.
 */
export async function indexScaleDocs(engineUrl: string, sink: BenchSink, idType: ScaleIdType, from: number, to: number): Promise<void> {
  const collection = SCALE_COLLECTIONS[idType];
  const target = sink.indexName(collection.index);
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let body = "";
  const flush = async () => {
    const p = postBulk(engineUrl, body).catch((err: unknown) => void (failure ??= err));
    body = "";
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (inFlight.size >= BULK_IN_FLIGHT) await Promise.race(inFlight);
    if (failure) throw failure;
  };
  for (let g = from + 1; g <= to; g++) {
    const row = scaleRow(idType, g);
    for (const line of bulkLines(desiredOperation(collection, row.id, row, rowVersion(collection, row)), target)) body += `${JSON.stringify(line)}\n`;
    if (body.length >= BULK_BYTES) await flush();
  }
  if (body.length > 0) await flush();
  await Promise.all(inFlight);
  if (failure) throw failure;
}
