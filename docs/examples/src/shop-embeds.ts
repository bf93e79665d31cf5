import { sql, type Generated, type Kysely } from "kysely";
import { defineCollection } from "@tether/core";

// The application's Kysely database interface (as kysely-codegen would write it).
export interface ShopDB {
  category: { id: Generated<string>; name: string; note: string | null };
  product: { id: Generated<string>; name: string; category_id: string; version: Generated<string>; deleted_at: Date | null };
  stock: { product_id: string; quantity: number };
  tag: { id: Generated<string>; name: string };
  product_tag: { product_id: string; tag_id: string };
  order: { id: Generated<string>; status: string };
  order_line: { id: Generated<string>; order_id: string; product_id: string; quantity: number };
}

// What a product document is built from: the product and what it reads of five other tables.
export interface ProductDocumentRow {
  id: string;
  name: string;
  category_id: string;
  version: string;
  deleted_at: Date | null;
  category: string | null;
  stock: number;
  tags: string[];
  on_order: number;
}

// One query per batch of ids, whatever the number of tables.
async function loadProducts(db: Kysely<ShopDB>, ids: readonly string[]): Promise<ProductDocumentRow[]> {
  const r = await sql<ProductDocumentRow>`
    SELECT p.*, c.name AS category, coalesce(s.quantity, 0)::int AS stock,
      coalesce((SELECT array_agg(t.name ORDER BY t.name) FROM product_tag pt JOIN tag t ON t.id = pt.tag_id WHERE pt.product_id = p.id), '{}') AS tags,
      coalesce((SELECT sum(l.quantity) FROM order_line l JOIN "order" o ON o.id = l.order_id WHERE l.product_id = p.id AND o.status = 'open'), 0)::int AS on_order
    FROM product p LEFT JOIN category c ON c.id = p.category_id LEFT JOIN stock s ON s.product_id = p.id
    WHERE p.id = ANY(${[...ids]}::bigint[])`.execute(db);
  return r.rows;
}

export const products = defineCollection<ShopDB>()({
  table: "product",
  id: "id",
  version: "version",
  deleted: "deleted_at",
  index: "products",
  load: loadProducts,
  toDocument: (p) => ({ name: p.name, category: p.category, stock: p.stock, in_stock: p.stock > 0, tags: p.tags, on_order: p.on_order }),
  embeds: {
    // A foreign key on the document's table: category.id = product.category_id. A rename reaches
    // every product of the category: one fan-out job, expanded by the drainer.
    category: { table: "category", on: { id: "category_id" }, columns: ["name"] },
    // A key on the other table naming the document: stock.product_id = product.id. A stock change
    // reaches exactly one product, bumped in the writing transaction.
    stock: { table: "stock", on: { product_id: "id" }, primaryKey: "product_id", columns: ["quantity"] },
    // A join table and the rows it reaches: product_tag.product_id = product.id, then tag.id = product_tag.tag_id.
    product_tags: { table: "product_tag", on: { product_id: "id" }, primaryKey: "product_id" },
    tags: { table: "tag", on: { id: "tag_id" }, through: "product_tags", columns: ["name"] },
    // Two levels: order → order line → product.
    lines: { table: "order_line", on: { product_id: "id" }, columns: ["quantity"] },
    orders: { table: "order", on: { id: "order_id" }, through: "lines", columns: ["status"], tag: "order" },
  },
});
