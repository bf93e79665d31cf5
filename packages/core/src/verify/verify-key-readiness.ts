import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { idTypeClass } from "../entity-id.js";
import type { Sink, SinkCallOptions } from "../sink.js";
import { hasEntityKeyIndex, idColumnType } from "../store/collection-store.js";

/**
 * What a collection of uuid or text ids still lacks for the bucketed verify (integer ids need
 * nothing: their key is the id, served by the primary key):
 * - `unkeyed_documents`: documents in its index written before ids other than integers had a
 *   bucket key. The bucketed verify refuses it (`VerifyNeedsRebuildError`): scheduled fast runs
 *   fail, `tether verify` falls back to the deep pass. Fix: `tether rebuild <collection>` once.
 * - `no_key_index`: no index on `tether.entity_key(id::text)`: each window of buckets scans the
 *   table. Fix: create it in the table's migration.
 */
export interface VerifyKeyWarning {
  collection: string;
  kind: "unkeyed_documents" | "no_key_index";
  /** Documents without a key (`unkeyed_documents`). */
  unkeyed?: number;
  message: string;
  /** What to run. */
  fix: string;
}

/**
 * Checks every collection of uuid or text ids for what the bucketed verify needs (see
 * `VerifyKeyWarning`): `tether status` lists the warnings, the drainer daemon logs them at
 * start-up. A collection whose index cannot be asked (the engine down) is checked for its
 * Postgres index only.
 *
 * @example
 * for (const w of await verifyKeyReadiness(db, sink, [products])) console.warn(w.message);
 */
export async function verifyKeyReadiness(
  db: Kysely<any>,
  sink: Sink,
  collections: readonly Collection<any>[],
  call: SinkCallOptions = {},
): Promise<VerifyKeyWarning[]> {
  const out: VerifyKeyWarning[] = [];
  for (const c of collections) {
    const type = await idColumnType(db, c);
    if (type === undefined || idTypeClass(type) === "integer") continue;
    const unkeyed = await sink.countUnkeyed?.(c.index, call).catch(() => 0);
    if (unkeyed !== undefined && unkeyed > 0) {
      out.push({
        collection: c.name,
        kind: "unkeyed_documents",
        unkeyed,
        message: `${c.name}: ${unkeyed} document(s) in its index predate the bucket key of ${type} ids: its scheduled fast verify fails and \`tether verify\` falls back to the deep pass until \`tether rebuild ${c.name}\` writes them again`,
        fix: `tether rebuild ${c.name}`,
      });
    }
    if (!(await hasEntityKeyIndex(db, c))) {
      const statement = `CREATE INDEX ON ${c.table} (tether.entity_key(${c.idColumn}::text));`;
      out.push({
        collection: c.name,
        kind: "no_key_index",
        message: `${c.name}: no index on tether.entity_key(${c.idColumn}::text): each window of its bucketed verify scans ${c.table}; add \`${statement}\` to the table's migration`,
        fix: statement,
      });
    }
  }
  return out;
}
