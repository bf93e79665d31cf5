import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { leadingIndexColumns, tableColumns } from "./catalog-store.js";
import { ConfigError } from "./config-error.js";

/** Something in the config that works but will cost: reported, never fatal. */
export interface ConfigWarning {
  /** The config file. */
  file: string;
  /** Dotted path of the field it concerns, e.g. `collections[0].embeds.category.on`. */
  field: string;
  message: string;
}

/**
 * Checks a collection's `embeds` against Postgres: each embedded table exists with its link
 * column, its primary key and the columns documents read, and the child of each link (the
 * document's table, or the table it is reached through) has the child's column. Throws a
 * ConfigError naming the field, the collection, the embed and the table or column.
 *
 * Warns (through `warn`) when a fan-out's chunk must scan a table: each level of a fan-out
 * embed's chain finds its rows by the child's column of the link (a product's category_id, an
 * order line's order_id), which needs an index whose first column it is.
 */
export async function checkEmbedsSchema(db: Kysely<any>, file: string, field: string, c: Collection<any>, warn: (w: ConfigWarning) => void): Promise<void> {
  const columnsOf = new Map<string, string[] | undefined>();
  const columns = async (table: string) => {
    if (!columnsOf.has(table)) columnsOf.set(table, await tableColumns(db, table));
    return columnsOf.get(table);
  };
  for (const [name, e] of Object.entries(c.embeds)) {
    const at = `${field}.embeds.${name}`;
    const of = `embed "${name}" of collection "${c.name}"`;
    const own = await columns(e.table);
    if (!own) throw new ConfigError(file, `${at}.table`, `table "${e.table}" of ${of} does not exist in Postgres (did the migrations run?)`);
    const need: [string, string][] = [
      ["on", e.linkColumn],
      ["primaryKey", e.primaryKey],
      ...(e.columns ?? []).map((column, j): [string, string] => [`columns[${j}]`, column]),
    ];
    for (const [key, column] of need) {
      if (!own.includes(column)) throw new ConfigError(file, `${at}.${key}`, `column "${column}" does not exist in table "${e.table}" (${of})`);
    }
    const child = await columns(e.childTable);
    if (!child) throw new ConfigError(file, `${field}.embeds.${e.through}.table`, `table "${e.childTable}" does not exist in Postgres (the table ${of} is reached through)`);
    if (!child.includes(e.childColumn)) {
      throw new ConfigError(file, `${at}.on.${e.linkColumn}`, `column "${e.childColumn}" does not exist in table "${e.childTable}", the child of ${of} (on: { ${e.linkColumn}: "${e.childColumn}" })`);
    }
  }

  const indexed = new Map<string, string[]>();
  const warned = new Set<string>();
  for (const [name, e] of Object.entries(c.embeds)) {
    if (e.direct) continue;
    for (const level of e.chain.map((n) => c.embeds[n]!)) {
      // The document's id is its primary key: a chunk walks it in order anyway.
      if (level.childTable === c.table && level.childColumn === c.idColumn) continue;
      const key = `${level.childTable}\u0000${level.childColumn}`;
      if (warned.has(key)) continue;
      if (!indexed.has(level.childTable)) indexed.set(level.childTable, await leadingIndexColumns(db, level.childTable));
      if (indexed.get(level.childTable)!.includes(level.childColumn)) continue;
      warned.add(key);
      const columnsToIndex = level.childTable === c.table ? `${level.childColumn}, ${c.idColumn}` : level.childColumn;
      warn({
        file,
        field: `${field}.embeds.${level.name}.on`,
        message:
          `no index of table "${level.childTable}" starts with column "${level.childColumn}": every chunk of a fan-out of embed "${name}" (collection "${c.name}") ` +
          `scans the table to find the documents a change reaches; add one, e.g. CREATE INDEX ON ${level.childTable} (${columnsToIndex})`,
      });
    }
  }
}
