import { sql, type Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { ValidationError } from "../errors.js";
import { raiseVersionFloor } from "../store/version-store.js";
import { captureNames, resolveCaptureOptions, WAKE_CHANNEL, WRITER_SETTING, type CaptureOptions } from "./capture-options.js";
import { embedCaptureNames, embedCaptureSql } from "./embed-capture-store.js";

/**
 * The capture trigger: every SQL statement that installs, removes or inspects it lives here.
 *
 * Design (one version bump and one job per change, whichever way the change came):
 * - BEFORE INSERT and BEFORE UPDATE, FOR EACH ROW: the row's version becomes
 *   `tether.next_version(…)` (migration 000005), a value of the global version sequence above the
 *   row's old version and above what the statement wrote (see ../write/version-rule.ts). So a
 *   re-inserted id (DELETE + INSERT, a COPY, an upsert, MERGE) lands above its tombstone, a key
 *   change gives the new id a fresh version, and a statement's own `version + 1` or a lowered
 *   version is replaced by one never used before. Only a BEFORE trigger can change NEW. The
 *   UPDATE trigger's WHEN clause (evaluated without calling the function) skips rows whose
 *   document columns, version and key did not change: those are not a change.
 * - AFTER INSERT / UPDATE / DELETE, FOR EACH STATEMENT, with transition tables: one
 *   INSERT … SELECT into tether.job per statement, however many rows it touched (a 100k-row
 *   UPDATE is one job insert, not 100k). An UPDATE enqueues the rows whose version changed,
 *   which is exactly the rows the BEFORE trigger counted. A deleted row's job (and a key
 *   change's old id) carries the version its tombstone takes, from the same sequence.
 *   Transition tables allow one event per trigger, hence three triggers.
 * - The writer's hand-shake: while the writer's own statements run it sets the
 *   transaction-local `tether.writer` to the collection's name (it bumps and enqueues itself);
 *   every trigger's WHEN skips while it holds that name. The writer clears it afterwards, so a
 *   plain statement later in the same transaction is captured again. The drainer's own bump
 *   (its leapfrog past a document that is ahead) uses the hand-shake too: its job covers it.
 */

type Db = Kysely<any>;

const qi = (ident: string) => ident.split(".").map((p) => `"${p}"`).join(".");
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

export interface CaptureSql {
  /** Installs (or replaces) the functions and triggers, the embedded tables' included; idempotent. */
  enable: string;
  /** Removes them; idempotent. */
  disable: string;
}

/**
 * The SQL that installs and removes a collection's capture trigger, for a migration file.
 *
 * @example
 * const { enable } = captureSql(widgets, { graceMs: 0 });
 * const appMigrations = { namespace: "app", migrations: [{ id: 7, name: "capture_widget", sql: enable }] };
 */
export function captureSql(collection: Collection<any>, options: CaptureOptions = {}): CaptureSql {
  const o = resolveCaptureOptions(options);
  const n = captureNames(collection);
  const table = qi(collection.table);
  const id = qi(collection.idColumn);
  const version = qi(collection.versionColumn);
  const notWriter = `current_setting(${lit(WRITER_SETTING)}, true) IS DISTINCT FROM ${lit(collection.name)}`;
  const watched = collection.captureColumns
    ? [...new Set([...collection.captureColumns, ...(collection.deletedColumn ? [collection.deletedColumn] : [])])].map(qi)
    : undefined;
  // The key and the version always count: a key change is a delete plus an insert, and a
  // statement that wrote a version of its own must not keep it (it may have been used before).
  const keyed = watched ? [...new Set([...watched, id, version])] : undefined;
  const changed = keyed ? `ROW(${keyed.map((c) => `OLD.${c}`).join(", ")}) IS DISTINCT FROM ROW(${keyed.map((c) => `NEW.${c}`).join(", ")})` : "OLD.* IS DISTINCT FROM NEW.*";
  const jobCols = "INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)";
  const jobHead = `SELECT ${lit(collection.jobName)}, now() + interval '${o.graceMs} milliseconds', ${o.priority}, ${lit(o.tag)}`;
  // Due-now work wakes listening drainers on commit; grace-delayed work must not wake them early.
  const wake = o.graceMs === 0 ? `\n  IF FOUND THEN PERFORM pg_notify(${lit(WAKE_CHANNEL)}, ${lit(collection.jobName)}); END IF;` : "";
  // `settings` are function-level SET clauses, in force only while the function runs.
  const fn = (name: string, body: string, settings = "") =>
    `CREATE OR REPLACE FUNCTION tether.${qi(name)}() RETURNS trigger LANGUAGE plpgsql${settings} AS $tether$\nBEGIN\n${body}\nEND\n$tether$;`;
  // The planner has no statistics on transition tables: it guessed 50M rows for the 100k-row
  // join below and JIT-compiled the job insert, about a third of a second of a 100k-row
  // statement's overhead spent compiling a plan that runs once. The job insert is a plain scan
  // (or one join) that gains nothing from JIT.
  const noJit = "\n  SET jit = off";
  const stmtTrigger = (name: string, event: string, referencing: string) =>
    `DROP TRIGGER IF EXISTS ${qi(name)} ON ${table};\n` +
    `CREATE TRIGGER ${qi(name)} AFTER ${event} ON ${table} REFERENCING ${referencing} FOR EACH STATEMENT\n  WHEN (${notWriter}) EXECUTE FUNCTION tether.${qi(name)}();`;

  const enable = [
    "CREATE SCHEMA IF NOT EXISTS tether;",
    fn(
      n.bump,
      // Above what the statement wrote (kept only when it is above every version handed out, e.g. a
      // COPY of rows with their versions) and above the old row's; never a value used before.
      `  IF TG_OP = 'INSERT' THEN\n    NEW.${version} := tether.next_version(COALESCE(NEW.${version}, 1) - 1);\n` +
        `  ELSE\n    NEW.${version} := tether.next_version(GREATEST(OLD.${version}, COALESCE(NEW.${version}, 1) - 1));\n  END IF;\n  RETURN NEW;`,
    ),
    fn(n.insert, `  ${jobCols}\n  ${jobHead}, jsonb_build_object('id', n.${id}::text)\n  FROM tether_new n;${wake}\n  RETURN NULL;`, noJit),
    fn(
      n.update,
      // A FULL JOIN also covers a changed primary key: the old id is a delete, the new one an
      // insert. The CASE builds each kind's kwargs directly (no jsonb_strip_nulls pass per row).
      `  ${jobCols}\n  ${jobHead}, CASE WHEN n.${id} IS NULL THEN jsonb_build_object('id', o.${id}::text, 'version', tether.next_version(o.${version}))\n` +
        `    ELSE jsonb_build_object('id', n.${id}::text) END\n` +
        `  FROM tether_new n FULL JOIN tether_old o ON o.${id} = n.${id}\n  WHERE n.${id} IS NULL OR o.${id} IS NULL OR n.${version} IS DISTINCT FROM o.${version};${wake}\n  RETURN NULL;`,
      noJit,
    ),
    fn(n.delete, `  ${jobCols}\n  ${jobHead}, jsonb_build_object('id', o.${id}::text, 'version', tether.next_version(o.${version}))\n  FROM tether_old o;${wake}\n  RETURN NULL;`, noJit),
    `DROP TRIGGER IF EXISTS ${qi(n.bump)} ON ${table};`,
    `CREATE TRIGGER ${qi(n.bump)} BEFORE UPDATE ON ${table} FOR EACH ROW\n  WHEN (${notWriter} AND ${changed}) EXECUTE FUNCTION tether.${qi(n.bump)}();`,
    `DROP TRIGGER IF EXISTS ${qi(n.bumpInsert)} ON ${table};`,
    `CREATE TRIGGER ${qi(n.bumpInsert)} BEFORE INSERT ON ${table} FOR EACH ROW\n  WHEN (${notWriter}) EXECUTE FUNCTION tether.${qi(n.bump)}();`,
    stmtTrigger(n.insert, "INSERT", "NEW TABLE AS tether_new"),
    stmtTrigger(n.update, "UPDATE", "OLD TABLE AS tether_old NEW TABLE AS tether_new"),
    stmtTrigger(n.delete, "DELETE", "OLD TABLE AS tether_old"),
  ].join("\n");

  const disable = [
    ...[n.bump, n.bumpInsert, n.insert, n.update, n.delete].map((t) => `DROP TRIGGER IF EXISTS ${qi(t)} ON ${table};`),
    ...[n.bump, n.insert, n.update, n.delete].map((f) => `DROP FUNCTION IF EXISTS tether.${qi(f)}();`),
  ].join("\n");
  // The tables the documents read: a change there reaches every document that embeds the row.
  const embeds = embedCaptureSql(collection);
  return { enable: [enable, embeds.enable].filter(Boolean).join("\n"), disable: [disable, embeds.disable].filter(Boolean).join("\n") };
}

async function columnsOf(db: Db, table: string): Promise<Set<string>> {
  const r = await sql<{ attname: string }>`
    SELECT a.attname FROM pg_attribute a
    WHERE a.attrelid = to_regclass(${table}) AND a.attnum > 0 AND NOT a.attisdropped`.execute(db);
  return new Set(r.rows.map((x) => x.attname));
}

/** Every embedded table exists with the columns its declaration names (its link, key, read columns, and its child's link column). */
async function requireEmbedColumns(db: Db, collection: Collection<any>): Promise<void> {
  for (const e of Object.values(collection.embeds)) {
    const have = await columnsOf(db, e.table);
    if (have.size === 0) throw new ValidationError(`collection.embeds.${e.name}.table`, `table ${e.table} does not exist`);
    for (const c of [e.linkColumn, e.primaryKey, ...(e.columns ?? [])]) {
      if (!have.has(c)) throw new ValidationError(`collection.embeds.${e.name}`, `table ${e.table} has no column "${c}"`);
    }
    const child = await columnsOf(db, e.childTable);
    if (!child.has(e.childColumn)) throw new ValidationError(`collection.embeds.${e.name}.on`, `table ${e.childTable} has no column "${e.childColumn}"`);
  }
}

async function requireColumns(db: Db, collection: Collection<any>): Promise<void> {
  const r = await sql<{ attname: string }>`
    SELECT a.attname FROM pg_attribute a
    WHERE a.attrelid = to_regclass(${collection.table}) AND a.attnum > 0 AND NOT a.attisdropped`.execute(db);
  if (r.rows.length === 0) throw new ValidationError("collection.table", `table ${collection.table} does not exist`);
  const have = new Set(r.rows.map((x) => x.attname));
  const needed = [collection.idColumn, collection.versionColumn, ...(collection.deletedColumn ? [collection.deletedColumn] : []), ...(collection.captureColumns ?? [])];
  for (const c of needed) {
    if (!have.has(c)) {
      const hint = c === collection.versionColumn ? `: run \`tether adopt ${collection.name}\` first` : "";
      throw new ValidationError("collection", `table ${collection.table} has no column "${c}"${hint}`);
    }
  }
}

/**
 * Installs the capture trigger on the collection's table (in one transaction; CREATE TRIGGER
 * holds a brief SHARE ROW EXCLUSIVE lock), after raising the version sequence above the table's
 * versions. Idempotent: enabling again replaces the options, and triggers installed by an older
 * release with the current logic.
 *
 * @example
 * await enableCapture(db, widgets);            // captured jobs: tag "capture", priority 1, 60 s grace
 * await enableCapture(db, widgets, { graceMs: 0 });
 */
export async function enableCapture(db: Db, collection: Collection<any>, options: CaptureOptions = {}): Promise<void> {
  const { enable } = captureSql(collection, options);
  await requireColumns(db, collection);
  await requireEmbedColumns(db, collection);
  // Outside the DDL transaction: its max() read must not hold the trigger's lock.
  await raiseVersionFloor(db, collection);
  await db.transaction().execute((trx) => sql.raw(enable).execute(trx));
}

/**
 * Removes the capture trigger and its functions. Idempotent.
 * @example
 * await disableCapture(db, widgets);
 */
export async function disableCapture(db: Db, collection: Collection<any>): Promise<void> {
  const { disable } = captureSql(collection);
  await db.transaction().execute((trx) => sql.raw(disable).execute(trx));
}

export interface CaptureStatus {
  /** True when all five triggers, and every embedded table's three, are installed and enabled. */
  enabled: boolean;
  /** Capture triggers present on the table. */
  triggers: string[];
  /** Capture functions present in the tether schema. */
  functions: string[];
  /** The tables the documents read, each with its capture triggers present (three when captured). */
  embeds: { embed: string; table: string; triggers: string[]; enabled: boolean }[];
}

/**
 * What capture has installed for a collection.
 * @example
 * const { enabled } = await captureStatus(db, widgets);
 */
export async function captureStatus(db: Db, collection: Collection<any>): Promise<CaptureStatus> {
  const n = captureNames(collection);
  const functions = [n.bump, n.insert, n.update, n.delete];
  const names = [...functions, n.bumpInsert];
  const t = await sql<{ tgname: string; tgenabled: string }>`
    SELECT tgname, tgenabled FROM pg_trigger
    WHERE tgrelid = to_regclass(${collection.table}) AND tgname = ANY(${names}::text[]) ORDER BY tgname`.execute(db);
  const f = await sql<{ proname: string }>`
    SELECT p.proname FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace
    WHERE s.nspname = 'tether' AND p.proname = ANY(${functions}::text[]) ORDER BY p.proname`.execute(db);
  const triggers = t.rows.map((r) => r.tgname);
  const embeds = [];
  for (const e of Object.values(collection.embeds)) {
    const en = Object.values(embedCaptureNames(e));
    const et = await sql<{ tgname: string; tgenabled: string }>`
      SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = to_regclass(${e.table}) AND tgname = ANY(${en}::text[]) ORDER BY tgname`.execute(db);
    embeds.push({ embed: e.name, table: e.table, triggers: et.rows.map((r) => r.tgname), enabled: et.rows.length === en.length && et.rows.every((r) => r.tgenabled !== "D") });
  }
  const own = t.rows.length === names.length && t.rows.every((r) => r.tgenabled !== "D");
  return { enabled: own && embeds.every((e) => e.enabled), triggers, functions: f.rows.map((r) => r.proname), embeds };
}
