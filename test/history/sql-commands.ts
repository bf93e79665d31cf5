import pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { sql } from "kysely";
import { tableOf, type IdKind } from "./history-domain.js";
import { expectPostgres, idOf, IntendedRollback, showRow, type HistoryCommand } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import { idCast, idIn, table } from "./history-rows.js";
import type { HistorySystem } from "./history-system.js";

/** Plain SQL with capture on: what an application, a migration or a psql session does beside the writer. */

export interface NewRow {
  slot: number;
  title: string;
  rank: string | null;
}

const fresh = (m: HistoryModel, kind: IdKind, rows: NewRow[]) => {
  const seen = new Set<number>();
  return rows.filter((r) => !seen.has(r.slot) && seen.add(r.slot) && !m.has(kind, m.idOf({ kind, slot: r.slot })));
};
const showRows = (kind: IdKind, rows: NewRow[]) => rows.map((r) => `${kind}#${r.slot} ${showRow(r)}`).join(", ");
const values = (sys: HistorySystem, kind: IdKind, rows: NewRow[]) =>
  sql.join(rows.map((r) => sql`(${idOf(sys, { kind, slot: r.slot })}::${idCast(kind)}, ${r.title}, ${r.rank})`));

/** One multi-row INSERT of ids not in the table. */
export class SqlInsert implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly rows: NewRow[]) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const rows = fresh(m, this.kind, this.rows);
    if (rows.length === 0) return;
    await sql`INSERT INTO ${table(this.kind)} (id, title, rank) VALUES ${values(sys, this.kind, rows)}`.execute(sys.db);
    for (const r of rows) m.put(this.kind, m.idOf({ kind: this.kind, slot: r.slot }), { title: r.title, rank: r.rank, deleted: false });
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: INSERT ${showRows(this.kind, this.rows)}`;
}

/** One multi-row UPDATE (live and soft-deleted rows alike), optionally rolled back. */
export class SqlUpdate implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly slots: number[], readonly title: string, readonly rollback: boolean) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const ids = this.slots.map((slot) => idOf(sys, { kind: this.kind, slot }));
    try {
      await sys.db.transaction().execute(async (trx) => {
        await sql`UPDATE ${table(this.kind)} SET title = ${this.title} WHERE ${idIn(ids)}`.execute(trx);
        if (this.rollback) throw new IntendedRollback("rolled back on purpose");
      });
    } catch (err) {
      if (!(err instanceof IntendedRollback)) throw err;
    }
    if (!this.rollback) for (const id of ids) if (m.has(this.kind, id)) m.put(this.kind, id, { ...m.rows[this.kind].get(id)!, title: this.title });
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: UPDATE ${this.kind}#[${this.slots.join(",")}] SET title=${JSON.stringify(this.title)}${this.rollback ? " then ROLLBACK" : ""}`;
}

/** Soft delete by plain SQL: `SET deleted_at = now()` on live rows. */
export class SqlSoftDelete implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly slots: number[]) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const ids = this.slots.map((slot) => idOf(sys, { kind: this.kind, slot }));
    await sql`UPDATE ${table(this.kind)} SET deleted_at = now() WHERE ${idIn(ids)} AND deleted_at IS NULL`.execute(sys.db);
    for (const id of ids) if (m.live(this.kind, id)) m.put(this.kind, id, { ...m.rows[this.kind].get(id)!, deleted: true });
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: UPDATE ${this.kind}#[${this.slots.join(",")}] SET deleted_at=now()`;
}

/** One multi-row DELETE. */
export class SqlDelete implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly slots: number[]) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const ids = this.slots.map((slot) => idOf(sys, { kind: this.kind, slot }));
    await sql`DELETE FROM ${table(this.kind)} WHERE ${idIn(ids)}`.execute(sys.db);
    for (const id of ids) m.remove(this.kind, id);
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: DELETE ${this.kind}#[${this.slots.join(",")}]`;
}

/** DELETE then INSERT of the same id with new content, in one transaction or two. */
export class SqlDeleteReinsert implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly row: NewRow, readonly oneTransaction: boolean) {}
  check = (m: Readonly<HistoryModel>) => m.has(this.kind, m.idOf({ kind: this.kind, slot: this.row.slot }));
  async run(m: HistoryModel, sys: HistorySystem) {
    const id = idOf(sys, { kind: this.kind, slot: this.row.slot });
    const del = sql`DELETE FROM ${table(this.kind)} WHERE ${idIn([id])}`;
    const ins = sql`INSERT INTO ${table(this.kind)} (id, title, rank) VALUES ${values(sys, this.kind, [this.row])}`;
    if (this.oneTransaction) {
      await sys.db.transaction().execute(async (trx) => {
        await del.execute(trx);
        await ins.execute(trx);
      });
    } else {
      await del.execute(sys.db);
      await ins.execute(sys.db);
    }
    m.put(this.kind, id, { title: this.row.title, rank: this.row.rank, deleted: false });
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: DELETE ${this.kind}#${this.row.slot}; INSERT it again ${showRow(this.row)}${this.oneTransaction ? " (one transaction)" : ""}`;
}

/** A primary-key change: `UPDATE … SET id = <free id>`. */
export class SqlKeyChange implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly from: number, readonly to: number) {}
  check = (m: Readonly<HistoryModel>) => m.has(this.kind, m.idOf({ kind: this.kind, slot: this.from })) && !m.has(this.kind, m.idOf({ kind: this.kind, slot: this.to }));
  async run(m: HistoryModel, sys: HistorySystem) {
    const from = idOf(sys, { kind: this.kind, slot: this.from });
    const to = idOf(sys, { kind: this.kind, slot: this.to });
    await sql`UPDATE ${table(this.kind)} SET id = ${to}::${idCast(this.kind)} WHERE ${idIn([from])}`.execute(sys.db);
    m.put(this.kind, to, m.rows[this.kind].get(from)!);
    m.remove(this.kind, from);
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: UPDATE ${this.kind}#${this.from} SET id=${this.kind}#${this.to}`;
}

/** INSERT … ON CONFLICT DO UPDATE, which also brings a soft-deleted row back. */
export class SqlUpsert implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly rows: NewRow[]) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const rows = [...new Map(this.rows.map((r) => [r.slot, r])).values()];
    await sql`INSERT INTO ${table(this.kind)} (id, title, rank) VALUES ${values(sys, this.kind, rows)}
      ON CONFLICT (id) DO UPDATE SET title = excluded.title, rank = excluded.rank, deleted_at = NULL`.execute(sys.db);
    for (const r of rows) m.put(this.kind, m.idOf({ kind: this.kind, slot: r.slot }), { title: r.title, rank: r.rank, deleted: false });
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: UPSERT ${showRows(this.kind, this.rows)}`;
}

export interface MergeRow extends NewRow {
  /** A matched row is deleted instead of updated (an unmatched one is then left out). */
  remove: boolean;
}

/** MERGE: matched rows updated or deleted, unmatched ones inserted, in one statement. */
export class SqlMerge implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly rows: MergeRow[]) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const rows = [...new Map(this.rows.map((r) => [r.slot, r])).values()];
    const source = sql.join(rows.map((r) => sql`(${idOf(sys, { kind: this.kind, slot: r.slot })}::text, ${r.title}::text, ${r.rank}::text, ${r.remove}::boolean)`));
    const version = await sql<{ n: string }>`SELECT current_setting('server_version_num') AS n`.execute(sys.db);
    if (Number(version.rows[0]!.n) >= 150_000) {
      await sql`MERGE INTO ${table(this.kind)} t USING (VALUES ${source}) AS s(id, title, rank, remove) ON t.id::text = s.id
        WHEN MATCHED AND s.remove THEN DELETE
        WHEN MATCHED THEN UPDATE SET title = s.title, rank = s.rank
        WHEN NOT MATCHED AND NOT s.remove THEN INSERT (id, title, rank) VALUES (s.id::${idCast(this.kind)}, s.title, s.rank)`.execute(sys.db);
    } else {
      // Postgres 14 has no MERGE (scripts/test-matrix runs the tester there too): the same three
      // actions as one statement of writable CTEs, which all see the rows as they were before it.
      await sql`WITH s(id, title, rank, remove) AS (VALUES ${source}),
        d AS (DELETE FROM ${table(this.kind)} t USING s WHERE t.id::text = s.id AND s.remove RETURNING t.id),
        u AS (UPDATE ${table(this.kind)} t SET title = s.title, rank = s.rank FROM s WHERE t.id::text = s.id AND NOT s.remove RETURNING t.id)
        INSERT INTO ${table(this.kind)} (id, title, rank)
        SELECT s.id::${idCast(this.kind)}, s.title, s.rank FROM s
        WHERE NOT s.remove AND NOT EXISTS (SELECT 1 FROM ${table(this.kind)} t WHERE t.id::text = s.id)`.execute(sys.db);
    }
    for (const r of rows) {
      const id = m.idOf({ kind: this.kind, slot: r.slot });
      const had = m.rows[this.kind].get(id);
      if (had && r.remove) m.remove(this.kind, id);
      else if (had) m.put(this.kind, id, { ...had, title: r.title, rank: r.rank });
      else if (!r.remove) m.put(this.kind, id, { title: r.title, rank: r.rank, deleted: false });
    }
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: MERGE ${this.rows.map((r) => `${this.kind}#${r.slot} ${r.remove ? "delete-if-matched" : showRow(r)}`).join(", ")}`;
}

/** COPY … FROM STDIN text format: backslash, tab and newline escaped, \N for NULL. */
const copyField = (v: string | null) => (v === null ? "\\N" : v.replaceAll("\\", "\\\\").replaceAll("\t", "\\t").replaceAll("\n", "\\n").replaceAll("\r", "\\r"));

/** COPY of ids not in the table (the bulk-load path). */
export class SqlCopy implements HistoryCommand {
  constructor(readonly kind: IdKind, readonly rows: NewRow[]) {}
  check = () => true;
  async run(m: HistoryModel, sys: HistorySystem) {
    const rows = fresh(m, this.kind, this.rows);
    if (rows.length === 0) return;
    const client = new pg.Client({ connectionString: sys.databaseUrl });
    await client.connect();
    try {
      const stream = client.query(copyFrom(`COPY ${tableOf(this.kind)} (id, title, rank) FROM STDIN`));
      const done = new Promise<void>((resolve, reject) => {
        stream.on("finish", resolve);
        stream.on("error", reject);
      });
      stream.end(rows.map((r) => [idOf(sys, { kind: this.kind, slot: r.slot }), r.title, r.rank].map(copyField).join("\t")).join("\n") + "\n");
      await done;
    } finally {
      await client.end();
    }
    for (const r of rows) m.put(this.kind, m.idOf({ kind: this.kind, slot: r.slot }), { title: r.title, rank: r.rank, deleted: false });
    await expectPostgres(sys, m, this.toString(), [this.kind]);
  }
  toString = () => `sql: COPY ${showRows(this.kind, this.rows)}`;
}
