import { ValidationError } from "./errors.js";
import { columnIdentifier, sqlIdentifier } from "./sql-identifier.js";

/**
 * Terminology
 * - embedded table: another table whose rows a collection's documents read (a product's
 *   category, its stock, its tags; an annotation's author), declared once beside the collection
 *   in `embeds`.
 * - link: how a row of the embedded table meets the rows it is embedded in: one column of it
 *   equal to one column of its child, the document's table or another embedded table it is
 *   reached `through` (`on: { id: "category_id" }` reads "catalog_category.id = catalog_product.category_id").
 * - link value: the value of the embedded table's link column in one row. A change is keyed by
 *   the link values it touched: an update that moves a row (a re-parent) touches its old and its
 *   new value, so the documents on both sides are reached.
 * - direct: the link meets the document's own id (a stock row's `product_id`, a join table's
 *   `product_id`): a changed row reaches exactly one document, whose version the writing
 *   transaction bumps at once.
 * - fan-out: any other link (a category read by every product in it): the writing transaction
 *   records the change (tether.embed_change) and enqueues one fan-out job per link value, which
 *   a drainer expands later in bounded chunks, bumping each document it reaches and enqueuing
 *   its sync job.
 */

/** One table a collection's documents read, as the collection declares it (`embeds`). */
export interface EmbedOptions {
  /** The other table, optionally schema-qualified. */
  table: string;
  /**
   * How its rows meet their child (the document's table, or the embed named by `through`):
   * exactly one entry, `{ <column of this table>: <column of the child> }`.
   * `{ id: "category_id" }`: the category whose id is the product's category_id.
   * `{ product_id: "id" }`: the stock row whose product_id is the product's id (direct).
   */
  on: Readonly<Record<string, string>>;
  /** The embed this table is reached through (a join table, a middle level). Default: the document's table. */
  through?: string;
  /**
   * This table's primary key: pairs a row before and after an UPDATE in the capture trigger,
   * and addresses rows in the writer's verbs. Default "id".
   */
  primaryKey?: string;
  /**
   * The columns documents read. A change to none of them (nor to a link column) reaches nothing
   * and enqueues nothing. Default: every column counts.
   */
  columns?: readonly string[];
  /** Priority of the jobs a change enqueues; lower runs first. Default 10 (after live writes at 1). */
  priority?: number;
  /** Delay before a fan-out job is due, so that a burst of changes coalesces. Default 0 (due at once, drainers woken). */
  delayMs?: number;
  /** Names the work in job tags: `fanout:<tag>.<insert|update|delete>`. Default: the embed's name. */
  tag?: string;
}

/** What an embed knows of the collection it belongs to (a `Collection` is one). */
export interface EmbedOwner {
  readonly name: string;
  readonly table: string;
  readonly idColumn: string;
  readonly versionColumn: string;
  readonly deletedColumn: string | undefined;
  readonly jobName: string;
  readonly fanoutJobName: string | undefined;
  readonly embeds: Readonly<Record<string, EmbeddedTable<any, any, any, any>>>;
}

/**
 * An embed, validated, with every default filled and its place in the chain of tables resolved.
 * `Row`, `Insert`, `Update` and `DB` are type-level only: what the writer's verbs accept for the
 * embedded table (`writer.updateWithJob(db, products.embeds.category, id, { name })`).
 */
export interface EmbeddedTable<Row = Record<string, unknown>, Insert = Record<string, unknown>, Update = Record<string, unknown>, DB = any> {
  /** The embed's name in the collection's `embeds`. */
  readonly name: string;
  /** The name of the collection it belongs to. */
  readonly collection: string;
  /** The collection it belongs to (the writer's verbs on an embed reach its documents through it). */
  readonly owner: EmbedOwner;
  /** `<collection>.<name>`: its key in tether.embed_change and in fan-out jobs. */
  readonly path: string;
  readonly table: string;
  readonly primaryKey: string;
  /** This table's column of the link. */
  readonly linkColumn: string;
  /** The embed it is reached through, or undefined when its child is the document's table. */
  readonly through: string | undefined;
  /** The child's table: the document's table, or the `through` embed's. */
  readonly childTable: string;
  /** The child's column of the link. */
  readonly childColumn: string;
  /** The columns documents read, undefined when every column counts. */
  readonly columns: readonly string[] | undefined;
  /**
   * The columns whose change counts as a change of the row: `columns`, the link column, and the
   * columns embeds reached through this one join on. Undefined when every column counts.
   */
  readonly watched: readonly string[] | undefined;
  /** The link meets the document's id: a changed row reaches one document, bumped in the writing transaction. */
  readonly direct: boolean;
  /** The embeds from the document's table outward, ending with this one (`[product_tags, tags]`). */
  readonly chain: readonly string[];
  readonly priority: number;
  readonly delayMs: number;
  readonly tag: string;
  /** Never set at run time: carries the writer's value types for the compiler. */
  readonly types?: { row: Row; insert: Insert; update: Update; db: DB };
}

/** An embed of any table, as core's statements take it. */
export type AnyEmbeddedTable = EmbeddedTable<any, any, any, any>;

const NAME = /^[a-z][a-z0-9_]*$/;
const TAG = /^[A-Za-z0-9_.:-]{1,180}$/;

/** The job name of a collection's fan-out jobs. */
export function fanoutJobName(collection: string): string {
  return `fanout_${collection}`;
}

/** The job tag of the work a change of `embed` enqueues. */
export function embedJobTag(embed: Pick<EmbeddedTable, "tag">, op: "insert" | "update" | "delete"): string {
  return `fanout:${embed.tag}.${op}`;
}

/**
 * Validates a collection's `embeds` and resolves each one's chain to the document's table.
 * Throws a ValidationError naming the field (`collection.embeds.<name>.on`, …).
 */
export function resolveEmbeds(collection: EmbedOwner, declared: Readonly<Record<string, EmbedOptions>> | undefined): Readonly<Record<string, EmbeddedTable>> {
  if (declared === undefined) return Object.freeze({});
  if (typeof declared !== "object" || declared === null || Array.isArray(declared)) throw new ValidationError("collection.embeds", "must be an object of named embedded tables");
  const field = (name: string, key?: string) => `collection.embeds.${name}${key ? `.${key}` : ""}`;
  const parsed = new Map<string, { opts: EmbedOptions; linkColumn: string; childColumn: string }>();
  for (const [name, opts] of Object.entries(declared)) {
    if (!NAME.test(name) || name.length > 40) throw new ValidationError(field(name), "embed names are lower-case words of at most 40 characters");
    if (typeof opts !== "object" || opts === null) throw new ValidationError(field(name), "must be an object");
    sqlIdentifier(field(name, "table"), opts.table);
    const on = Object.entries(opts.on ?? {});
    if (on.length !== 1) throw new ValidationError(field(name, "on"), 'must name exactly one pair { <column of this table>: <column of its child> }, e.g. { id: "category_id" }');
    const [linkColumn, childColumn] = on[0]!;
    columnIdentifier(field(name, "on"), linkColumn);
    columnIdentifier(field(name, `on.${linkColumn}`), childColumn);
    if (opts.through !== undefined && (typeof opts.through !== "string" || !(opts.through in declared) || opts.through === name)) {
      throw new ValidationError(field(name, "through"), `must name another embed of this collection (have: ${Object.keys(declared).filter((n) => n !== name).join(", ") || "none"})`);
    }
    if (opts.primaryKey !== undefined) columnIdentifier(field(name, "primaryKey"), opts.primaryKey);
    if (opts.columns !== undefined) {
      if (!Array.isArray(opts.columns) || opts.columns.length === 0) throw new ValidationError(field(name, "columns"), "must be a non-empty array of column names");
      opts.columns.forEach((c, i) => columnIdentifier(field(name, `columns[${i}]`), c));
    }
    // A table that embeds its own rows (a parent product): the drainer's bump of a document must
    // not count as a change of the row it embeds, or a cycle of rows would fan out forever.
    if (opts.table === collection.table && (opts.columns === undefined || opts.columns.includes(collection.versionColumn))) {
      throw new ValidationError(field(name, "columns"), `an embed of the document's own table must list the columns documents read, without "${collection.versionColumn}"`);
    }
    if (opts.priority !== undefined && (!Number.isInteger(opts.priority) || opts.priority < 0 || opts.priority > 1_000_000)) throw new ValidationError(field(name, "priority"), "must be an integer in 0..1000000");
    if (opts.delayMs !== undefined && (!Number.isInteger(opts.delayMs) || opts.delayMs < 0 || opts.delayMs > 86_400_000)) throw new ValidationError(field(name, "delayMs"), "must be an integer number of milliseconds in 0..86400000");
    if (opts.tag !== undefined && (typeof opts.tag !== "string" || !TAG.test(opts.tag))) throw new ValidationError(field(name, "tag"), "must be 1-180 characters of letters, digits and _ . : -");
    parsed.set(name, { opts, linkColumn, childColumn });
  }

  // Each chain must reach the document's table without a cycle.
  const chainOf = (name: string): string[] => {
    const chain = [name];
    for (let at = parsed.get(name)!.opts.through; at !== undefined; at = parsed.get(at)!.opts.through) {
      if (chain.includes(at)) throw new ValidationError(field(name, "through"), `the embeds ${[...chain, at].join(" → ")} go round in a circle`);
      chain.push(at);
    }
    return chain.reverse();
  };

  const resolved: Record<string, EmbeddedTable> = {};
  for (const [name, { opts, linkColumn, childColumn }] of parsed) {
    const through = opts.through;
    const childTable = through === undefined ? collection.table : parsed.get(through)!.opts.table;
    const joinedHere = [...parsed.values()].filter((p) => p.opts.through === name).map((p) => p.childColumn);
    const columns = opts.columns ? Object.freeze([...opts.columns]) : undefined;
    resolved[name] = Object.freeze({
      name,
      collection: collection.name,
      owner: collection,
      path: `${collection.name}.${name}`,
      table: opts.table,
      primaryKey: opts.primaryKey ?? "id",
      linkColumn,
      through,
      childTable,
      childColumn,
      columns,
      watched: columns ? Object.freeze([...new Set([...columns, linkColumn, ...joinedHere])]) : undefined,
      direct: through === undefined && childColumn === collection.idColumn,
      chain: Object.freeze(chainOf(name)),
      priority: opts.priority ?? 10,
      delayMs: opts.delayMs ?? 0,
      tag: opts.tag ?? name,
    });
  }
  return Object.freeze(resolved);
}

/** The document table's columns that links of its embeds meet (a product's category_id): a change to one is a change of the document. */
export function documentLinkColumns(embeds: Readonly<Record<string, EmbeddedTable>>): string[] {
  return [...new Set(Object.values(embeds).filter((e) => e.through === undefined && !e.direct).map((e) => e.childColumn))];
}
