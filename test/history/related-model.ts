/**
 * The model of the related tables a history drives: the shop of test/support/shop.ts, whose
 * product documents read a category (a foreign key on the product, fan-out), a stock row (a key
 * on the other table, direct), tags through a join table (direct, then fan-out) and orders
 * through their lines (two levels). Ids are small and fixed per table (slot i is id i + 1), so
 * commands collide.
 */

export const RELATED_POOL = { product: 5, category: 3, tag: 3, order: 2, line: 4 } as const;
export type RelatedTable = keyof typeof RELATED_POOL;
/** The tables a document reads by a fan-out (a rename reaches every product that reads the row). */
export type ParentTable = "category" | "tag" | "order";

export const relatedId = (slot: number) => String(slot + 1);

export interface ProductRow {
  name: string;
  category: string | null;
  deleted: boolean;
}

export interface LineRow {
  order: string;
  product: string;
  quantity: number;
}

export class RelatedModel {
  /** Names of categories and tags, statuses of orders, by id. */
  readonly parents: Record<ParentTable, Map<string, string>> = { category: new Map(), tag: new Map(), order: new Map() };
  readonly products = new Map<string, ProductRow>();
  /** Quantity by product id. */
  readonly stock = new Map<string, number>();
  /** Join rows, `<product>:<tag>`. */
  readonly links = new Set<string>();
  readonly lines = new Map<string, LineRow>();
  /** Highest version seen per product, and its content then (see `productContent`). */
  readonly seen = new Map<string, { version: bigint; content: string }>();

  live(product: string): boolean {
    const p = this.products.get(product);
    return p !== undefined && !p.deleted;
  }

  /** A deep copy of the rows (the versions seen stay with the history's own model). */
  clone(): RelatedModel {
    const c = new RelatedModel();
    c.copyRows(this);
    return c;
  }

  copyRows(from: RelatedModel): void {
    for (const t of ["category", "tag", "order"] as const) {
      this.parents[t].clear();
      for (const [k, v] of from.parents[t]) this.parents[t].set(k, v);
    }
    this.products.clear();
    for (const [k, v] of from.products) this.products.set(k, { ...v });
    this.stock.clear();
    for (const [k, v] of from.stock) this.stock.set(k, v);
    this.links.clear();
    for (const l of from.links) this.links.add(l);
    this.lines.clear();
    for (const [k, v] of from.lines) this.lines.set(k, { ...v });
  }

  /**
   * What a product's version stands for: its own row and, while it is live, what it reads by a
   * direct embed (its stock, its join rows, its order lines), all bumped in the writing
   * transaction. What it reads by a fan-out (a category's name, a tag's, an order's status) is
   * left out: the drainer bumps the version when it expands the change, later.
   */
  productContent(id: string): string {
    const p = this.products.get(id);
    if (p === undefined) return "absent";
    if (p.deleted) return JSON.stringify([p.name, p.category, true]);
    const tags = [...this.links].filter((l) => l.startsWith(`${id}:`)).sort();
    const lines = [...this.lines].filter(([, l]) => l.product === id).map(([k, l]) => [k, l.order, l.quantity]).sort();
    return JSON.stringify([p.name, p.category, false, this.stock.get(id) ?? null, tags, lines]);
  }
}
