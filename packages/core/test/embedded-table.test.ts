import { describe, expect, it } from "vitest";
import { defineCollection, ValidationError } from "../src/internal.js";

const base = { name: "product", table: "product", index: "products", load: async () => [], toDocument: (r: Record<string, unknown>) => r };

describe("declaring embeds", () => {
  it("resolves each embed's child, chain, watched columns and whether it is direct; the document's own link columns join its capture columns", () => {
    const c = defineCollection<Record<string, unknown>>({
      ...base,
      captureColumns: ["name"],
      embeds: {
        lines: { table: "order_line", on: { product_id: "id" }, columns: ["quantity"] },
        orders: { table: "order", on: { id: "order_id" }, through: "lines", columns: ["status"], priority: 20, delayMs: 500, tag: "order" },
        category: { table: "category", on: { id: "category_id" } },
      },
    });
    expect(c.embeds.lines).toMatchObject({ path: "product.lines", childTable: "product", childColumn: "id", direct: true, chain: ["lines"], watched: ["quantity", "product_id", "order_id"] });
    expect(c.embeds.orders).toMatchObject({ childTable: "order_line", childColumn: "order_id", direct: false, chain: ["lines", "orders"], priority: 20, delayMs: 500, tag: "order" });
    expect(c.embeds.category).toMatchObject({ direct: false, watched: undefined, priority: 10, delayMs: 0, tag: "category", primaryKey: "id" });
    expect(c.fanoutJobName).toBe("fanout_product");
    expect(c.captureColumns).toEqual(["name", "category_id"]);
    expect(c.embed("orders")).toBe(c.embeds.orders);
    expect(() => c.embed("nope")).toThrow(/embeds no table named "nope" \(embeds: lines, orders, category\)/);
  });

  it("a collection whose embeds are all direct has no fan-out lane", () => {
    const c = defineCollection<Record<string, unknown>>({ ...base, embeds: { stock: { table: "stock", on: { product_id: "id" } } } });
    expect(c.fanoutJobName).toBeUndefined();
  });

  it.each([
    [{ category: { table: "category", on: {} } }, "collection.embeds.category.on"],
    [{ category: { table: "category", on: { id: "a", x: "b" } } }, "collection.embeds.category.on"],
    [{ category: { table: "Category", on: { id: "category_id" } } }, "collection.embeds.category.table"],
    [{ category: { table: "category", on: { id: "category_id" }, through: "nope" } }, "collection.embeds.category.through"],
    [{ a: { table: "a", on: { id: "x" }, through: "b" }, b: { table: "b", on: { id: "y" }, through: "a" } }, "collection.embeds.a.through"],
    [{ category: { table: "category", on: { id: "category_id" }, columns: [] } }, "collection.embeds.category.columns"],
    [{ category: { table: "category", on: { id: "category_id" }, priority: -1 } }, "collection.embeds.category.priority"],
    [{ category: { table: "category", on: { id: "category_id" }, tag: "a b" } }, "collection.embeds.category.tag"],
    [{ Bad: { table: "category", on: { id: "category_id" } } }, "collection.embeds.Bad"],
    [{ parent: { table: "product", on: { id: "parent_id" } } }, "collection.embeds.parent.columns"],
    [{ parent: { table: "product", on: { id: "parent_id" }, columns: ["name", "version"] } }, "collection.embeds.parent.columns"],
  ])("refuses %j naming %s", (embeds, field) => {
    let err: unknown;
    try {
      defineCollection<Record<string, unknown>>({ ...base, embeds: embeds as never });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe(field);
  });

  it("refuses embeds without a load that reads them, and a sync job name taken by fan-outs", () => {
    expect(() => defineCollection({ name: "p", table: "p", index: "p", toDocument: (r) => r, embeds: { c: { table: "c", on: { id: "c_id" } } } })).toThrow(/collection.load: a collection with embeds needs a load/);
    expect(() => defineCollection({ name: "p", table: "p", index: "p", toDocument: (r) => r, jobName: "fanout_p" })).toThrow(/collection.jobName/);
  });
});
