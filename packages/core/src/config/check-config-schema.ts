import type { Kysely } from "kysely";
import { tableColumns } from "./catalog-store.js";
import { ConfigError } from "./config-error.js";
import type { LoadedConfig } from "./tether-config.js";

/**
 * Checks every collection of a loaded config against Postgres: its table exists, and so do its
 * id, version and soft-delete columns and the columns of its re-index scopes. Run at start,
 * after migrations, so a typo stops the process instead of parking every job later.
 * Throws `ConfigError` naming the file and the field.
 *
 * @example
 * const loaded = await loadConfig({ path });
 * await migrate(db, loaded.config.migrations ?? []);
 * await checkConfigSchema(db, loaded);
 */
export async function checkConfigSchema(db: Kysely<any>, { file, config }: LoadedConfig): Promise<void> {
  for (const [i, c] of config.collections.entries()) {
    const field = `collections[${i}]`;
    const columns = await tableColumns(db, c.table);
    if (!columns) throw new ConfigError(file, `${field}.table`, `table "${c.table}" of collection "${c.name}" does not exist in Postgres (did the migrations run?)`);
    const need: [string, string | undefined][] = [
      ["idColumn", c.idColumn],
      ["versionColumn", c.versionColumn],
      ["deletedColumn", c.deletedColumn],
      ...Object.entries(c.reindexScopes).map(([name, s]): [string, string | undefined] => [`reindexScopes.${name}.column`, s.kind === "ids" ? undefined : s.column]),
    ];
    for (const [key, column] of need) {
      if (column !== undefined && !columns.includes(column)) {
        throw new ConfigError(file, `${field}.${key}`, `column "${column}" does not exist in table "${c.table}" (collection "${c.name}")`);
      }
    }
  }
}
