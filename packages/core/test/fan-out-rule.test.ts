import { describe, expect, it } from "vitest";
import { defineCollection, embedChangeEffect, touchedLinks, type EmbedChange } from "../src/internal.js";

/** The fan-out rule (src/fan-out-rule.ts), row by row of its first table. */
const products = defineCollection<Record<string, unknown>>({
  name: "product",
  table: "product",
  index: "products",
  load: async () => [],
  toDocument: (r) => r,
  embeds: {
    category: { table: "category", on: { id: "category_id" }, columns: ["name"] },
    stock: { table: "stock", on: { product_id: "id" }, primaryKey: "product_id", columns: ["quantity"] },
    product_tags: { table: "product_tag", on: { product_id: "id" }, primaryKey: "product_id" },
    tags: { table: "tag", on: { id: "tag_id" }, through: "product_tags", columns: ["name"] },
  },
});
const { category, stock, product_tags: productTags, tags } = products.embeds as Record<string, NonNullable<(typeof products.embeds)[string]>>;

describe("the fan-out rule", () => {
  const rows: { row: string; change: EmbedChange; category: string[]; stock: string[] }[] = [
    { row: "INSERT: the new row's value", change: { op: "insert", after: "7" }, category: ["7"], stock: ["7"] },
    { row: "UPDATE of a read column: the row's value", change: { op: "update", before: "7", after: "7", changedColumns: ["name", "quantity"] }, category: ["7"], stock: ["7"] },
    { row: "UPDATE of the link column (a re-parent): both values", change: { op: "update", before: "7", after: "8", changedColumns: ["id", "product_id"] }, category: ["7", "8"], stock: ["7", "8"] },
    { row: "UPDATE of the primary key: both values", change: { op: "update", before: "7", after: "8", changedColumns: [], keyChanged: true }, category: ["7", "8"], stock: ["7", "8"] },
    { row: "UPDATE of columns no document reads: nothing", change: { op: "update", before: "7", after: "7", changedColumns: ["note", "updated_at"] }, category: [], stock: [] },
    { row: "DELETE: the old row's value", change: { op: "delete", before: "7" }, category: ["7"], stock: ["7"] },
    { row: "a NULL link value: none on that side", change: { op: "update", before: null, after: "8", changedColumns: ["id", "product_id"] }, category: ["8"], stock: ["8"] },
  ];

  it.each(rows)("$row", ({ change, category: c, stock: s }) => {
    expect(touchedLinks(category!, change)).toEqual(c);
    expect(touchedLinks(stock!, change)).toEqual(s);
  });

  it("a direct embed (its link names the document's id) bumps the documents; any other fans out", () => {
    expect(embedChangeEffect(stock!, { op: "insert", after: "7" })).toEqual({ action: "bump_documents", links: ["7"] });
    expect(embedChangeEffect(productTags!, { op: "delete", before: "7" })).toEqual({ action: "bump_documents", links: ["7"] });
    expect(embedChangeEffect(category!, { op: "insert", after: "7" })).toEqual({ action: "fan_out", links: ["7"] });
    expect(embedChangeEffect(tags!, { op: "update", before: "3", after: "3", changedColumns: ["name"] })).toEqual({ action: "fan_out", links: ["3"] });
    expect(embedChangeEffect(category!, { op: "update", before: "7", after: "7", changedColumns: ["note"] })).toEqual({ action: "nothing" });
  });

  it("a join table watches the column the embed reached through it joins on", () => {
    expect(productTags!.watched).toBeUndefined(); // every column counts: none declared
    expect(tags!.watched).toEqual(["name", "id"]);
    expect(touchedLinks(tags!, { op: "update", before: "3", after: "3", changedColumns: ["color"] })).toEqual([]);
  });
});
