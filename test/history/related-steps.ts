import { sql } from "kysely";
import type { EmbeddedTable, EntityChange, Writer } from "@tether/core";
import { shopProducts } from "../support/shop.js";
import type { RelatedModel, ParentTable } from "./related-model.js";
import { relatedId } from "./related-model.js";
import type { HistorySystem } from "./history-system.js";

type Db = Parameters<Writer["createWithJob"]>[0];

/** Through the writer's verbs (on the collection or on its embeds), or plain SQL with capture on. */
export type Via = "writer" | "sql";

/** One change of the related tables: the commands' unit, alone or several in the caller's transaction. */
export type RelatedStep =
  /** A category or tag renamed (or created), an order's status changed; `null` deletes the row (its products keep the dangling id). */
  | { op: "parent"; table: ParentTable; slot: number; value: string | null; via: Via }
  /** A product's stock set (created when it has none); `null` deletes the stock row. */
  | { op: "stock"; product: number; quantity: number | null; via: Via }
  /** A product moved to another category (or none). */
  | { op: "reparent"; product: number; category: number | null; via: Via }
  /** A tag linked to a product through the join table, or unlinked. */
  | { op: "link"; product: number; tag: number; linked: boolean; via: Via }
  /** An order line created or changed (moved to another order or product, its quantity); `null` deletes it. */
  | { op: "line"; line: number; order: number; product: number; quantity: number | null; via: Via }
  /** The product's own row. */
  | { op: "product"; product: number; action: "create" | "rename" | "softDelete" | "hardDelete" | "restore"; name: string; category: number | null; via: Via };

const PARENT_TABLE: Record<ParentTable, { table: string; column: string; embed: "category" | "tags" | "orders" }> = {
  category: { table: "shop_category", column: "name", embed: "category" },
  tag: { table: "shop_tag", column: "name", embed: "tags" },
  order: { table: "shop_order", column: "status", embed: "orders" },
};

const id = relatedId;
const opt = (slot: number | null) => (slot === null ? null : id(slot));

export function showRelatedStep(s: RelatedStep): string {
  const v = s.via;
  switch (s.op) {
    case "parent":
      return `${v}: ${s.value === null ? "delete" : "set"} ${s.table}#${id(s.slot)}${s.value === null ? "" : ` ${JSON.stringify(s.value)}`}`;
    case "stock":
      return `${v}: stock of product#${id(s.product)} ${s.quantity === null ? "deleted" : `= ${s.quantity}`}`;
    case "reparent":
      return `${v}: product#${id(s.product)} moved to category#${opt(s.category) ?? "none"}`;
    case "link":
      return `${v}: ${s.linked ? "link" : "unlink"} product#${id(s.product)} tag#${id(s.tag)}`;
    case "line":
      return `${v}: ${s.quantity === null ? `delete line#${id(s.line)}` : `line#${id(s.line)} = order#${id(s.order)} product#${id(s.product)} x${s.quantity}`}`;
    case "product":
      return `${v}: ${s.action} product#${id(s.product)}${s.action === "create" || s.action === "rename" ? ` ${JSON.stringify(s.name)}` : ""}${s.action === "create" ? ` in category#${opt(s.category) ?? "none"}` : ""}`;
  }
}

/** Whether the step applies to `m` (a delete needs its row, a link its absence; the writer's verbs need a live product). */
export function relatedStepApplies(m: RelatedModel, s: RelatedStep): boolean {
  switch (s.op) {
    case "parent":
      return s.value !== null || m.parents[s.table].has(id(s.slot));
    case "stock":
      return s.quantity !== null || m.stock.has(id(s.product));
    case "reparent":
      return s.via === "writer" ? m.live(id(s.product)) : m.products.has(id(s.product));
    case "link":
      return m.links.has(`${id(s.product)}:${id(s.tag)}`) !== s.linked;
    case "line":
      return s.quantity !== null || m.lines.has(id(s.line));
    case "product": {
      const p = m.products.get(id(s.product));
      if (s.action === "create") return p === undefined;
      if (s.action === "hardDelete") return p !== undefined;
      if (s.action === "restore") return p?.deleted === true;
      return p !== undefined && !p.deleted;
    }
  }
}

type Changes = EntityChange<any>[];

/**
 * Runs one step on `db` (a Kysely, or the caller's transaction) and applies it to `m`. Returns
 * the product changes the writer handed back: in the caller's transaction, `syncNow` sends them
 * after COMMIT.
 */
export async function runRelatedStep(sys: HistorySystem, db: Db, m: RelatedModel, s: RelatedStep): Promise<Changes> {
  const w = sys.writer;
  const E = shopProducts.embeds;
  switch (s.op) {
    case "parent": {
      const t = PARENT_TABLE[s.table];
      const embed: EmbeddedTable<any, any, any, any> = E[t.embed];
      const key = id(s.slot);
      const exists = m.parents[s.table].has(key);
      let changes: Changes = [];
      if (s.via === "sql") {
        const table = sql.table(t.table);
        const col = sql.ref(t.column);
        if (s.value === null) await sql`DELETE FROM ${table} WHERE id = ${key}::bigint`.execute(db);
        else await sql`INSERT INTO ${table} (id, ${col}) VALUES (${key}::bigint, ${s.value}) ON CONFLICT (id) DO UPDATE SET ${col} = excluded.${col}`.execute(db);
      } else if (s.value === null) changes = (await w.deleteWithJob(db, embed, key)).changes;
      else if (exists) changes = (await w.updateWithJob(db, embed, key, { [t.column]: s.value })).changes;
      else changes = (await w.createWithJob(db, embed, { id: key, [t.column]: s.value })).changes;
      if (s.value === null) m.parents[s.table].delete(key);
      else m.parents[s.table].set(key, s.value);
      return changes;
    }
    case "stock": {
      const pid = id(s.product);
      let changes: Changes = [];
      if (s.via === "sql") {
        if (s.quantity === null) await sql`DELETE FROM shop_stock WHERE product_id = ${pid}::bigint`.execute(db);
        else await sql`INSERT INTO shop_stock (product_id, quantity) VALUES (${pid}::bigint, ${s.quantity}) ON CONFLICT (product_id) DO UPDATE SET quantity = excluded.quantity`.execute(db);
      } else if (s.quantity === null) changes = (await w.deleteWithJob(db, E.stock, pid)).changes;
      else if (m.stock.has(pid)) changes = (await w.updateWithJob(db, E.stock, pid, { quantity: s.quantity })).changes;
      else changes = (await w.createWithJob(db, E.stock, { product_id: pid, quantity: s.quantity })).changes;
      if (s.quantity === null) m.stock.delete(pid);
      else m.stock.set(pid, s.quantity);
      return changes;
    }
    case "reparent": {
      const pid = id(s.product);
      const category = opt(s.category);
      let changes: Changes = [];
      if (s.via === "sql") await sql`UPDATE shop_product SET category_id = ${category}::bigint WHERE id = ${pid}::bigint`.execute(db);
      else changes = (await w.updateWithJob(db, shopProducts, pid, { category_id: category })).changes;
      m.products.set(pid, { ...m.products.get(pid)!, category });
      return changes;
    }
    case "link": {
      const [pid, tid] = [id(s.product), id(s.tag)];
      let changes: Changes = [];
      if (s.via === "sql") {
        if (s.linked) await sql`INSERT INTO shop_product_tag (product_id, tag_id) VALUES (${pid}::bigint, ${tid}::bigint)`.execute(db);
        else await sql`DELETE FROM shop_product_tag WHERE product_id = ${pid}::bigint AND tag_id = ${tid}::bigint`.execute(db);
      } else if (s.linked) changes = (await w.createWithJob(db, E.product_tags, { product_id: pid, tag_id: tid })).changes;
      else {
        // The join table's key is composite: one link goes by the caller's own statement, its link values handed back.
        const r = await w.writeWithJobs(db, E.product_tags, async (trx) => {
          const del = await sql<{ p: string }>`DELETE FROM shop_product_tag WHERE product_id = ${pid}::bigint AND tag_id = ${tid}::bigint RETURNING product_id::text AS p`.execute(trx);
          return del.rows.map((x) => x.p);
        });
        changes = r.changes;
      }
      if (s.linked) m.links.add(`${pid}:${tid}`);
      else m.links.delete(`${pid}:${tid}`);
      return changes;
    }
    case "line": {
      const lid = id(s.line);
      const values = { order_id: id(s.order), product_id: id(s.product), quantity: s.quantity ?? 0 };
      let changes: Changes = [];
      if (s.via === "sql") {
        if (s.quantity === null) await sql`DELETE FROM shop_order_line WHERE id = ${lid}::bigint`.execute(db);
        else {
          await sql`INSERT INTO shop_order_line (id, order_id, product_id, quantity) VALUES (${lid}::bigint, ${values.order_id}::bigint, ${values.product_id}::bigint, ${values.quantity})
            ON CONFLICT (id) DO UPDATE SET order_id = excluded.order_id, product_id = excluded.product_id, quantity = excluded.quantity`.execute(db);
        }
      } else if (s.quantity === null) changes = (await w.deleteWithJob(db, E.lines, lid)).changes;
      else if (m.lines.has(lid)) changes = (await w.updateWithJob(db, E.lines, lid, values)).changes;
      else changes = (await w.createWithJob(db, E.lines, { id: lid, ...values })).changes;
      if (s.quantity === null) m.lines.delete(lid);
      else m.lines.set(lid, { order: values.order_id, product: values.product_id, quantity: values.quantity });
      return changes;
    }
    case "product":
      return runProductStep(sys, db, m, s);
  }
}

async function runProductStep(sys: HistorySystem, db: Db, m: RelatedModel, s: Extract<RelatedStep, { op: "product" }>): Promise<Changes> {
  const w = sys.writer;
  const pid = id(s.product);
  const category = opt(s.category);
  const had = m.products.get(pid);
  let changes: Changes = [];
  const writer = s.via === "writer" && s.action !== "restore";
  switch (s.action) {
    case "create":
      if (writer) changes = (await w.createWithJob(db, shopProducts, { id: pid, name: s.name, category_id: category })).changes;
      else await sql`INSERT INTO shop_product (id, name, category_id) VALUES (${pid}::bigint, ${s.name}, ${category}::bigint)`.execute(db);
      m.products.set(pid, { name: s.name, category, deleted: false });
      break;
    case "rename":
      if (writer) changes = (await w.updateWithJob(db, shopProducts, pid, { name: s.name })).changes;
      else await sql`UPDATE shop_product SET name = ${s.name} WHERE id = ${pid}::bigint`.execute(db);
      m.products.set(pid, { ...had!, name: s.name });
      break;
    case "softDelete":
      if (writer) changes = (await w.deleteWithJob(db, shopProducts, pid)).changes;
      else await sql`UPDATE shop_product SET deleted_at = now() WHERE id = ${pid}::bigint`.execute(db);
      m.products.set(pid, { ...had!, deleted: true });
      break;
    case "hardDelete":
      if (writer) changes = (await w.deleteWithJob(db, shopProducts, pid, { hard: true })).changes;
      else await sql`DELETE FROM shop_product WHERE id = ${pid}::bigint`.execute(db);
      m.products.delete(pid);
      break;
    case "restore":
      await sql`UPDATE shop_product SET deleted_at = NULL WHERE id = ${pid}::bigint`.execute(db);
      m.products.set(pid, { ...had!, deleted: false });
      break;
  }
  return changes;
}
