import type { Collection } from "../collection.js";
import { embedJobTag, type AnyEmbeddedTable as EmbeddedTable } from "../embedded-table.js";
import { boundedIdentifier } from "../sql-identifier.js";
import { WAKE_CHANNEL, WRITER_SETTING } from "./capture-options.js";

/**
 * The capture triggers of a collection's embedded tables: a plain-SQL change to a row a document
 * reads reaches that document, in the writing transaction, as ../fan-out-rule.ts says.
 *
 * One statement-level AFTER trigger per event, with transition tables (one statement of work per
 * statement, however many rows it touched):
 * - the changed link values: an INSERT's new ones, a DELETE's old ones, an UPDATE's old and new
 *   ones of the rows whose watched columns changed (rows paired on the primary key; a changed
 *   key is a delete plus an insert). An UPDATE that changed no watched column changes nothing.
 * - a direct embed (the link value is the document's id): one UPDATE bumps those documents'
 *   versions (`tether.next_version`) and enqueues their sync jobs, due at once.
 * - a fan-out embed: one upsert into tether.embed_change (a new version per link value, taken
 *   after the row lock) and one fan-out job per link value. Nothing here depends on how many
 *   documents read the row.
 * The writer's hand-shake: while the writer writes the embedded table itself it sets
 * `tether.writer` to the embed's path (`<collection>.<embed>`) and does the same work itself;
 * each trigger's WHEN skips then. Inside `writeWithJobs` of the collection (`tether.writer` is
 * the collection's name) the triggers fire: a plain statement there is captured.
 */

const qi = (ident: string) => ident.split(".").map((p) => `"${p}"`).join(".");
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Names of one embed's trigger functions (also its triggers' names, on the embedded table). */
export function embedCaptureNames(embed: EmbeddedTable): { insert: string; update: string; delete: string } {
  const base = `tether_embed_${embed.collection}_${embed.name}`;
  return { insert: boundedIdentifier(`${base}_ins`), update: boundedIdentifier(`${base}_upd`), delete: boundedIdentifier(`${base}_del`) };
}

/** The link values a statement changed, in the column's own type, as a query yielding `v`. */
function changedLinks(embed: EmbeddedTable, op: "insert" | "update" | "delete"): string {
  const link = qi(embed.linkColumn);
  if (op === "insert") return `SELECT DISTINCT n.${link} AS v FROM tether_new n WHERE n.${link} IS NOT NULL`;
  if (op === "delete") return `SELECT DISTINCT o.${link} AS v FROM tether_old o WHERE o.${link} IS NOT NULL`;
  const pk = qi(embed.primaryKey);
  const changed = embed.watched
    ? `ROW(${embed.watched.map((c) => `o.${qi(c)}`).join(", ")}) IS DISTINCT FROM ROW(${embed.watched.map((c) => `n.${qi(c)}`).join(", ")})`
    : "ROW(o.*) IS DISTINCT FROM ROW(n.*)";
  return (
    `WITH c AS (SELECT o.${link} AS ov, n.${link} AS nv FROM tether_new n FULL JOIN tether_old o ON o.${pk} = n.${pk}\n` +
    `    WHERE o.${pk} IS NULL OR n.${pk} IS NULL OR ${changed})\n` +
    `  SELECT ov AS v FROM c WHERE ov IS NOT NULL UNION SELECT nv FROM c WHERE nv IS NOT NULL`
  );
}

/** The body of one trigger function: what a changed link value does. */
function triggerBody(collection: Collection<any>, embed: EmbeddedTable, op: "insert" | "update" | "delete"): string {
  const links = changedLinks(embed, op);
  const jobCols = "INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)";
  const tag = lit(embedJobTag(embed, op));
  if (embed.direct) {
    const t = (c: string) => `t.${qi(c)}`;
    const live = collection.deletedColumn ? ` AND (${t(collection.deletedColumn)} IS NULL OR ${t(collection.deletedColumn)}::text = 'false')` : "";
    const sync = lit(collection.jobName);
    return [
      `  PERFORM set_config(${lit(WRITER_SETTING)}, ${lit(collection.name)}, true);`,
      `  WITH l AS (${links}),`,
      `  b AS (UPDATE ${qi(collection.table)} t SET ${qi(collection.versionColumn)} = tether.next_version(${t(collection.versionColumn)})`,
      `    FROM l WHERE ${t(collection.idColumn)} = l.v${live} RETURNING ${t(collection.idColumn)}::text AS id)`,
      `  ${jobCols}`,
      `  SELECT ${sync}, now(), ${embed.priority}, ${tag}, jsonb_build_object('id', b.id, 'via', jsonb_build_object('table', ${lit(embed.table)}, 'column', ${lit(embed.linkColumn)}, 'value', b.id))`,
      `  FROM b;`,
      `  IF FOUND THEN PERFORM pg_notify(${lit(WAKE_CHANNEL)}, ${sync}); END IF;`,
      `  PERFORM set_config(${lit(WRITER_SETTING)}, COALESCE(prev, ''), true);`,
    ].join("\n");
  }
  const fanout = lit(collection.fanoutJobName!);
  return [
    `  WITH l AS (${links}),`,
    `  up AS (INSERT INTO tether.embed_change AS ec (embed, link, version) SELECT ${lit(embed.path)}, l.v::text, tether.next_version() FROM l`,
    `    ON CONFLICT (embed, link) DO UPDATE SET version = tether.next_version(ec.version), changed_at = now() RETURNING ec.link, ec.version)`,
    `  ${jobCols}`,
    `  SELECT ${fanout}, now() + interval '${embed.delayMs} milliseconds', ${embed.priority}, ${tag}, jsonb_build_object('embed', ${lit(embed.name)}, 'link', up.link, 'version', up.version)`,
    `  FROM up;`,
    embed.delayMs === 0 ? `  IF FOUND THEN PERFORM pg_notify(${lit(WAKE_CHANNEL)}, ${fanout}); END IF;` : "",
  ]
    .filter(Boolean)
    .join("\n");
}

/** The SQL that installs and removes the capture triggers of every embed of `collection`. */
export function embedCaptureSql(collection: Collection<any>): { enable: string; disable: string } {
  const enable: string[] = [];
  const disable: string[] = [];
  for (const embed of Object.values(collection.embeds)) {
    const names = embedCaptureNames(embed);
    const table = qi(embed.table);
    const notWriter = `current_setting(${lit(WRITER_SETTING)}, true) IS DISTINCT FROM ${lit(embed.path)}`;
    for (const op of ["insert", "update", "delete"] as const) {
      const name = names[op];
      const referencing = op === "insert" ? "NEW TABLE AS tether_new" : op === "delete" ? "OLD TABLE AS tether_old" : "OLD TABLE AS tether_old NEW TABLE AS tether_new";
      enable.push(
        // The planner has no statistics on transition tables; JIT compiling this plan costs more than running it.
        `CREATE OR REPLACE FUNCTION tether.${qi(name)}() RETURNS trigger LANGUAGE plpgsql\n  SET jit = off AS $tether$\n` +
          `DECLARE\n  prev text := current_setting(${lit(WRITER_SETTING)}, true);\nBEGIN\n${triggerBody(collection, embed, op)}\n  RETURN NULL;\nEND\n$tether$;`,
        `DROP TRIGGER IF EXISTS ${qi(name)} ON ${table};`,
        `CREATE TRIGGER ${qi(name)} AFTER ${op.toUpperCase()} ON ${table} REFERENCING ${referencing} FOR EACH STATEMENT\n  WHEN (${notWriter}) EXECUTE FUNCTION tether.${qi(name)}();`,
      );
      disable.push(`DROP TRIGGER IF EXISTS ${qi(name)} ON ${table};`, `DROP FUNCTION IF EXISTS tether.${qi(name)}();`);
    }
  }
  return { enable: enable.join("\n"), disable: disable.join("\n") };
}
