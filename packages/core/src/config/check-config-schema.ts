import type { Kysely } from "kysely";
import { tableColumns } from "./catalog-store.js";
import { ConfigError } from "./config-error.js";
import { checkEmbedsSchema, type ConfigWarning } from "./check-embeds-schema.js";

export type { ConfigWarning };
import type { LoadedConfig } from "./tether-config.js";

/**
 * An existing table that lacks only what `tether adopt` adds (the version column, and the
 * soft-delete column with `--add-deleted-column`): not a config error but a deploy step.
 */
export interface PendingAdoption {
  /** The collection's name, as `tether adopt` takes it. */
  collection: string;
  table: string;
  /** The columns adopt will add. */
  missing: string[];
  /** The command that adopts it, e.g. `tether adopt note --add-deleted-column`. */
  command: string;
}

export interface CheckConfigSchemaOptions {
  /**
   * What a table that only needs adopting is: "error" (default) throws `ConfigError` saying to
   * run `tether adopt`; "report" returns it, for processes that go on without it (`tether
   * migrate` reports it, the drainer serves the other collections and this one once adopted).
   */
  pendingAdoption?: "error" | "report";
  /**
   * Called for what works but will cost, e.g. a fan-out embed whose child column no index
   * starts with (each chunk of its fan-outs scans the table). Default: ignored.
   */
  onWarning?: (warning: ConfigWarning) => void;
}

/**
 * Checks every collection of a loaded config against Postgres: its table exists, and so do its
 * id, version and soft-delete columns and the columns of its re-index scopes, and each embedded
 * table with its link, primary key and read columns and the child column of its link. Run at start,
 * after migrations, so a typo stops the process instead of parking every job later.
 * Throws `ConfigError` naming the file and the field; returns the tables that need adopting
 * when `pendingAdoption` is "report".
 *
 * @example
 * const loaded = await loadConfig({ path });
 * await migrate(db, loaded.config.migrations ?? []);
 * await checkConfigSchema(db, loaded, { onWarning: (w) => console.warn(`${w.field}: ${w.message}`) });
 */
export async function checkConfigSchema(db: Kysely<any>, { file, config }: LoadedConfig, opts: CheckConfigSchemaOptions = {}): Promise<PendingAdoption[]> {
  const pending: PendingAdoption[] = [];
  for (const [i, c] of config.collections.entries()) {
    const field = `collections[${i}]`;
    const columns = await tableColumns(db, c.table);
    if (!columns) throw new ConfigError(file, `${field}.table`, `table "${c.table}" of collection "${c.name}" does not exist in Postgres (did the migrations run?)`);
    const need: [string, string | undefined][] = [
      ["idColumn", c.idColumn],
      ...Object.entries(c.reindexScopes).map(([name, s]): [string, string | undefined] => [`reindexScopes.${name}.column`, s.kind === "ids" ? undefined : s.column]),
    ];
    for (const [key, column] of need) {
      if (column !== undefined && !columns.includes(column)) {
        throw new ConfigError(file, `${field}.${key}`, `column "${column}" does not exist in table "${c.table}" (collection "${c.name}")`);
      }
    }
    await checkEmbedsSchema(db, file, field, c, opts.onWarning ?? (() => undefined));
    // What adopt adds is checked last: a table with another problem is reported for that one.
    const adoptable: [string, string | undefined][] = [
      ["versionColumn", c.versionColumn],
      ["deletedColumn", c.deletedColumn],
    ];
    const missing = adoptable.filter(([, column]) => column !== undefined && !columns.includes(column)) as [string, string][];
    if (missing.length === 0) continue;
    const command = `tether adopt ${c.name}${missing.some(([key]) => key === "deletedColumn") ? " --add-deleted-column" : ""}`;
    if (opts.pendingAdoption !== "report") {
      const [key, column] = missing[0]!;
      throw new ConfigError(file, `${field}.${key}`, `column "${column}" does not exist in table "${c.table}" (collection "${c.name}"); an existing table is brought under tether with \`${command}\``);
    }
    pending.push({ collection: c.name, table: c.table, missing: missing.map(([, column]) => column), command });
  }
  return pending;
}
