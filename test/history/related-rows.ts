import { sql, type Kysely } from "kysely";
import { RelatedModel, type ParentTable } from "./related-model.js";

/** The shop tables as a RelatedModel, read from Postgres (test code: plain SQL), with each product's version. */
export async function readRelated(db: Kysely<any>): Promise<{ rows: RelatedModel; versions: Map<string, bigint> }> {
  const rows = new RelatedModel();
  const parents: Record<ParentTable, string> = { category: "SELECT id::text AS id, name AS v FROM shop_category", tag: "SELECT id::text AS id, name AS v FROM shop_tag", order: "SELECT id::text AS id, status AS v FROM shop_order" };
  for (const [t, q] of Object.entries(parents) as [ParentTable, string][]) {
    for (const r of (await sql<{ id: string; v: string }>`${sql.raw(q)}`.execute(db)).rows) rows.parents[t].set(r.id, r.v);
  }
  const versions = new Map<string, bigint>();
  const products = await sql<{ id: string; name: string; category_id: string | null; version: string; deleted: boolean }>`
    SELECT id::text AS id, name, category_id::text AS category_id, version::text AS version, deleted_at IS NOT NULL AS deleted FROM shop_product`.execute(db);
  for (const r of products.rows) {
    rows.products.set(r.id, { name: r.name, category: r.category_id, deleted: r.deleted });
    versions.set(r.id, BigInt(r.version));
  }
  for (const r of (await sql<{ id: string; q: number }>`SELECT product_id::text AS id, quantity AS q FROM shop_stock`.execute(db)).rows) rows.stock.set(r.id, r.q);
  for (const r of (await sql<{ l: string }>`SELECT product_id::text || ':' || tag_id::text AS l FROM shop_product_tag`.execute(db)).rows) rows.links.add(r.l);
  const lines = await sql<{ id: string; o: string; p: string; q: number }>`SELECT id::text AS id, order_id::text AS o, product_id::text AS p, quantity AS q FROM shop_order_line`.execute(db);
  for (const r of lines.rows) rows.lines.set(r.id, { order: r.o, product: r.p, quantity: r.q });
  return { rows, versions };
}

const describe = (m: RelatedModel) =>
  JSON.stringify({
    category: [...m.parents.category].sort(),
    tag: [...m.parents.tag].sort(),
    order: [...m.parents.order].sort(),
    product: [...m.products].sort(),
    stock: [...m.stock].sort(),
    links: [...m.links].sort(),
    lines: [...m.lines].sort(),
  });

/**
 * The shop tables against the model, after every command: the same rows, and each product's
 * version only moving forward, strictly when what it stands for changed (`productContent`).
 * Returns what differs; records the versions seen.
 */
export async function compareRelated(db: Kysely<any>, model: RelatedModel, checkVersions: boolean): Promise<string[]> {
  const problems: string[] = [];
  const { rows, versions } = await readRelated(db);
  const got = describe(rows);
  const want = describe(model);
  if (got !== want) problems.push(`the shop tables hold ${got}, the history says ${want}`);
  for (const [id, version] of versions) {
    const content = model.productContent(id);
    const seen = model.seen.get(id);
    if (checkVersions && seen && (version < seen.version || (version === seen.version && seen.content !== content))) {
      problems.push(`product ${id}: version ${version} with ${content} after version ${seen.version} with ${seen.content} (a version must move forward, and move when a row its document reads directly changed)`);
    }
    if (!seen || version > seen.version) model.seen.set(id, { version, content });
  }
  return problems;
}
