import { sql, type Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { ValidationError } from "../errors.js";
import { captureNames, resolveCaptureOptions, WAKE_CHANNEL, WRITER_SETTING, type CaptureOptions } from "./capture-options.js";

/**
 * The capture trigger: every SQL statement that installs, removes or inspects it lives here.
 *
 * Design (one version bump and one job per change, whichever way the change came):
 * - BEFORE UPDATE, FOR EACH ROW: raises the version to GREATEST(NEW.version, OLD.version + 1), so
 *   a statement that lowered it cannot break monotonicity. It must run before the row is written:
 *   only a BEFORE trigger can change NEW. Its WHEN clause (evaluated without calling the
 *   function) skips rows whose document columns did not change and rows whose version the
 *   statement already raised (`SET version = version + 1`): those are not bumped twice, and a
 *   bulk data migration that bumps versions itself pays no per-row function call.
 * - AFTER INSERT / UPDATE / DELETE, FOR EACH STATEMENT, with transition tables: one
 *   INSERT … SELECT into tether.job per statement, however many rows it touched (a 100k-row
 *   UPDATE is one job insert, not 100k). An UPDATE enqueues the rows whose version changed,
 *   which is exactly the rows the BEFORE trigger counted (or that the statement bumped itself).
 *   Transition tables allow one event per trigger, hence three triggers.
 * - The writer's hand-shake: while the writer's own statements run it sets the
 *   transaction-local `tether.writer` to the collection's name (it bumps and enqueues itself);
 *   every trigger's WHEN skips while it holds that name. The writer clears it afterwards, so a
 *   plain statement later in the same transaction is captured again.
 */

type Db = Kysely<any>;

const qi = (ident: string) => ident.split(".").map((p) => `"${p}"`).join(".");
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

export interface CaptureSql {
  /** Installs (or replaces) the functions and triggers; idempotent. */
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
  const changed = watched ? `ROW(${watched.map((c) => `OLD.${c}`).join(", ")}) IS DISTINCT FROM ROW(${watched.map((c) => `NEW.${c}`).join(", ")})` : "OLD.* IS DISTINCT FROM NEW.*";
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
    fn(n.bump, `  -- One bump per change: a statement that already raised the version keeps it; a lowered one is overridden.\n  NEW.${version} := GREATEST(NEW.${version}, COALESCE(OLD.${version}, 0) + 1);\n  RETURN NEW;`),
    fn(n.insert, `  ${jobCols}\n  ${jobHead}, jsonb_build_object('id', n.${id}::text)\n  FROM tether_new n;${wake}\n  RETURN NULL;`, noJit),
    fn(
      n.update,
      // A FULL JOIN also covers a changed primary key: the old id is a delete, the new one an
      // insert. The CASE builds each kind's kwargs directly (no jsonb_strip_nulls pass per row).
      `  ${jobCols}\n  ${jobHead}, CASE WHEN n.${id} IS NULL THEN jsonb_build_object('id', o.${id}::text, 'version', o.${version} + 1)\n` +
        `    ELSE jsonb_build_object('id', n.${id}::text) END\n` +
        `  FROM tether_new n FULL JOIN tether_old o ON o.${id} = n.${id}\n  WHERE n.${id} IS NULL OR o.${id} IS NULL OR n.${version} IS DISTINCT FROM o.${version};${wake}\n  RETURN NULL;`,
      noJit,
    ),
    fn(n.delete, `  ${jobCols}\n  ${jobHead}, jsonb_build_object('id', o.${id}::text, 'version', o.${version} + 1)\n  FROM tether_old o;${wake}\n  RETURN NULL;`, noJit),
    `DROP TRIGGER IF EXISTS ${qi(n.bump)} ON ${table};`,
    // A statement that raised the version itself needs nothing from the function, whose call is
    // the trigger's main per-row cost: the WHEN clause (no function call) skips it.
    `CREATE TRIGGER ${qi(n.bump)} BEFORE UPDATE ON ${table} FOR EACH ROW\n  WHEN (${notWriter} AND ${changed} AND (NEW.${version} > OLD.${version}) IS NOT TRUE) EXECUTE FUNCTION tether.${qi(n.bump)}();`,
    stmtTrigger(n.insert, "INSERT", "NEW TABLE AS tether_new"),
    stmtTrigger(n.update, "UPDATE", "OLD TABLE AS tether_old NEW TABLE AS tether_new"),
    stmtTrigger(n.delete, "DELETE", "OLD TABLE AS tether_old"),
  ].join("\n");

  const disable = [
    ...[n.bump, n.insert, n.update, n.delete].map((t) => `DROP TRIGGER IF EXISTS ${qi(t)} ON ${table};`),
    ...[n.bump, n.insert, n.update, n.delete].map((f) => `DROP FUNCTION IF EXISTS tether.${qi(f)}();`),
  ].join("\n");
  return { enable, disable };
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
 * holds a brief SHARE ROW EXCLUSIVE lock). Idempotent: enabling again replaces the options.
 *
 * @example
 * await enableCapture(db, widgets);            // captured jobs: tag "capture", priority 1, 60 s grace
 * await enableCapture(db, widgets, { graceMs: 0 });
 */
export async function enableCapture(db: Db, collection: Collection<any>, options: CaptureOptions = {}): Promise<void> {
  const { enable } = captureSql(collection, options);
  await requireColumns(db, collection);
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
  /** True when all four triggers are installed and enabled. */
  enabled: boolean;
  /** Capture triggers present on the table. */
  triggers: string[];
  /** Capture functions present in the tether schema. */
  functions: string[];
}

/**
 * What capture has installed for a collection.
 * @example
 * const { enabled } = await captureStatus(db, widgets);
 */
export async function captureStatus(db: Db, collection: Collection<any>): Promise<CaptureStatus> {
  const n = captureNames(collection);
  const names = [n.bump, n.insert, n.update, n.delete];
  const t = await sql<{ tgname: string; tgenabled: string }>`
    SELECT tgname, tgenabled FROM pg_trigger
    WHERE tgrelid = to_regclass(${collection.table}) AND tgname = ANY(${names}::text[]) ORDER BY tgname`.execute(db);
  const f = await sql<{ proname: string }>`
    SELECT p.proname FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace
    WHERE s.nspname = 'tether' AND p.proname = ANY(${names}::text[]) ORDER BY p.proname`.execute(db);
  const triggers = t.rows.map((r) => r.tgname);
  return { enabled: t.rows.length === names.length && t.rows.every((r) => r.tgenabled !== "D"), triggers, functions: f.rows.map((r) => r.proname) };
}
