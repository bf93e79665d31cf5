import { sql, type Kysely, type RawBuilder } from "kysely";
import { tableOf, type HistoryRow, type IdKind } from "./history-domain.js";
import { contentOf, type HistoryModel, type ModelRow } from "./history-model.js";

/** The history tables' statements (test code: plain SQL is what the history exercises). */
export const table = (kind: IdKind) => sql.table(tableOf(kind));

/** `id` compared as text, so one statement shape serves bigint, uuid and text ids. */
export const idIn = (ids: readonly string[]): RawBuilder<unknown> => sql`id::text = ANY(${sql.val([...ids])}::text[])`;

/** The id column's type, for a value that arrives as text. */
export const idCast = (kind: IdKind) => sql.raw(kind);

export async function readRows(db: Kysely<any>, kind: IdKind): Promise<Map<string, HistoryRow>> {
  const r = await sql<HistoryRow>`SELECT id::text AS id, title, rank, version::text AS version, deleted_at FROM ${table(kind)}`.execute(db);
  return new Map(r.rows.map((row) => [row.id, row]));
}

export const modelRowOf = (r: HistoryRow): ModelRow => ({ title: r.title, rank: r.rank, deleted: r.deleted_at !== null });

/**
 * Postgres against the model, after every command: the same rows with the same content, and
 * each entity's version only moving forward (strictly, when its content changed), across
 * deletes and re-inserts. Returns what differs; records the versions seen.
 */
export async function comparePostgres(db: Kysely<any>, model: HistoryModel, kinds: readonly IdKind[]): Promise<string[]> {
  const problems: string[] = [];
  for (const kind of kinds) {
    const rows = await readRows(db, kind);
    const ids = new Set([...rows.keys(), ...model.rows[kind].keys()]);
    for (const id of ids) {
      const expected = model.rows[kind].get(id);
      const actual = rows.get(id);
      const want = contentOf(expected);
      const got = contentOf(actual && modelRowOf(actual));
      if (want !== got) problems.push(`${kind} ${JSON.stringify(id)}: Postgres holds ${got}, the history says ${want}`);
      if (!actual) continue;
      const version = BigInt(actual.version);
      const seen = model.seen[kind].get(id);
      if (model.checkVersions && seen && (version < seen.version || (version === seen.version && seen.content !== got))) {
        problems.push(`${kind} ${JSON.stringify(id)}: version ${version} with ${got} after version ${seen.version} with ${seen.content} (a version must move forward and never name two contents)`);
      }
      if (!seen || version > seen.version) model.seen[kind].set(id, { version, content: got });
    }
  }
  return problems;
}
