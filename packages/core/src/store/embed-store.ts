import { sql, type Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { embedJobTag, type AnyEmbeddedTable as EmbeddedTable } from "../embedded-table.js";
import { WAKE_CHANNEL, WRITER_SETTING } from "../capture/capture-options.js";
import { liveDocument, pendingChange, reachedBy, reachingJoins } from "./embed-chain.js";
import { arrayLiteral } from "./array-literal.js";
import type { EmbedVia, JobRow } from "../job.js";

/**
 * Every statement on tether.embed_change, the fan-out jobs' expansion, and the writes the writer
 * makes on an embedded table. What each does, and why, is the table in ../fan-out-rule.ts.
 */

type Db = Kysely<any>;
type Row = Record<string, unknown>;

export type EmbedOp = "insert" | "update" | "delete";

const ref = (alias: string, column: string) => sql.ref(`${alias}.${column}`);
const uniq = (values: readonly (string | null | undefined)[]) => [...new Set(values.filter((v): v is string => v !== null && v !== undefined))];

/**
 * A direct embed's change (the link value is the document's id): bumps the versions of the live
 * documents with these ids, in the writing transaction, and enqueues their sync jobs due after
 * `delayMs`. The statement carries the capture hand-shake, so the documents' own triggers stay
 * out of the way. Returns each bumped document with its new version and its job's id.
 */
export async function bumpDirectDocuments(
  db: Db,
  collection: Collection<any>,
  embed: EmbeddedTable,
  links: readonly string[],
  job: { op: EmbedOp; delayMs: number },
): Promise<{ id: string; version: number; jobId: string }[]> {
  const ids = uniq(links);
  if (ids.length === 0) return [];
  const r = await sql<{ id: string; version: string; job_id: string }>`
    WITH flag AS MATERIALIZED (SELECT set_config(${WRITER_SETTING}, ${collection.name}, true) AS f),
    b AS (
      UPDATE ${sql.table(collection.table)} AS t
      SET ${sql.ref(collection.versionColumn)} = tether.next_version(${ref("t", collection.versionColumn)})
      FROM flag
      WHERE flag.f IS NOT NULL AND ${ref("t", collection.idColumn)} = ANY(${arrayLiteral(ids)}) AND ${liveDocument(collection)}
      RETURNING ${ref("t", collection.idColumn)}::text AS id, ${ref("t", collection.versionColumn)}::text AS version
    ), j AS (
      INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
      SELECT ${collection.jobName}, now() + ${job.delayMs} * interval '1 millisecond', ${embed.priority}, ${embedJobTag(embed, job.op)},
             jsonb_build_object('id', b.id, 'via', jsonb_build_object('table', ${embed.table}::text, 'column', ${embed.linkColumn}::text, 'value', b.id))
      FROM b
      RETURNING id, kwargs->>'id' AS entity_id
    )
    SELECT b.id, b.version, j.id::text AS job_id FROM b JOIN j ON j.entity_id = b.id`.execute(db);
  await sql`SELECT set_config(${WRITER_SETTING}, '', true)`.execute(db);
  if (job.delayMs <= 0 && r.rows.length > 0) await sql`SELECT pg_notify(${WAKE_CHANNEL}, ${collection.jobName})`.execute(db);
  return r.rows.map((x) => ({ id: x.id, version: Number(x.version), jobId: x.job_id }));
}

/**
 * A fan-out embed's change: records each link value's change in tether.embed_change (a version
 * taken after the row lock, so a later change of the same value holds a larger one) and enqueues
 * one fan-out job per link value. O(link values): nothing here depends on how many documents
 * embed the rows. Returns the fan-out jobs' ids.
 */
export async function recordFanouts(db: Db, collection: Collection<any>, embed: EmbeddedTable, links: readonly string[], op: EmbedOp): Promise<string[]> {
  const values = uniq(links);
  if (values.length === 0 || collection.fanoutJobName === undefined) return [];
  const r = await sql<{ id: string }>`
    WITH up AS (
      INSERT INTO tether.embed_change AS ec (embed, link, version)
      SELECT ${embed.path}, l.v, tether.next_version() FROM unnest(${values}::text[]) AS l(v)
      ON CONFLICT (embed, link) DO UPDATE SET version = tether.next_version(ec.version), changed_at = now()
      RETURNING ec.link, ec.version
    )
    INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
    SELECT ${collection.fanoutJobName}, now() + ${embed.delayMs} * interval '1 millisecond', ${embed.priority}, ${embedJobTag(embed, op)},
           jsonb_build_object('embed', ${embed.name}::text, 'link', up.link, 'version', up.version)
    FROM up
    RETURNING id::text AS id`.execute(db);
  if (embed.delayMs <= 0) await sql`SELECT pg_notify(${WAKE_CHANNEL}, ${collection.fanoutJobName})`.execute(db);
  return r.rows.map((x) => x.id);
}

/** The hand-shake while the writer writes an embedded table itself: that embed's capture triggers stay out of the way. */
async function flagEmbed(db: Db, embed: EmbeddedTable | undefined): Promise<void> {
  await sql`SELECT set_config(${WRITER_SETTING}, ${embed?.path ?? ""}, true)`.execute(db);
}

const LINK = "__tether_link";
const linkAsText = (embed: EmbeddedTable) => sql<string | null>`${sql.ref(embed.linkColumn)}::text`.as(LINK);

/** Splits the link value (as Postgres writes it as text) off a returned row. */
function withLink(returned: Row): { row: Row; link: string | undefined } {
  const { [LINK]: link, ...row } = returned;
  return { row, link: link === null || link === undefined ? undefined : String(link) };
}

/** Inserts a row into an embedded table; returns it and its link value. */
export async function insertEmbedRow(db: Db, embed: EmbeddedTable, values: Row): Promise<{ row: Row; links: string[] }> {
  await flagEmbed(db, embed);
  const returned = (await db.insertInto(embed.table).values(values).returningAll().returning(linkAsText(embed)).executeTakeFirstOrThrow()) as Row;
  await flagEmbed(db, undefined);
  const { row, link } = withLink(returned);
  return { row, links: uniq([link]) };
}

/**
 * Updates one row of an embedded table by its primary key; returns the row and the link values it
 * had before and has after (both reach documents when the update moves it); undefined when no row.
 */
export async function updateEmbedRow(db: Db, embed: EmbeddedTable, key: unknown, patch: Row): Promise<{ row: Row; links: string[] } | undefined> {
  const before = (await db.selectFrom(embed.table).select(linkAsText(embed)).where(embed.primaryKey, "=", key).forUpdate().executeTakeFirst()) as Row | undefined;
  if (!before) return undefined;
  await flagEmbed(db, embed);
  const returned = (await db.updateTable(embed.table).set(patch).where(embed.primaryKey, "=", key).returningAll().returning(linkAsText(embed)).executeTakeFirst()) as Row | undefined;
  await flagEmbed(db, undefined);
  if (!returned) return undefined;
  const { row, link } = withLink(returned);
  return { row, links: uniq([withLink(before).link, link]) };
}

/** Deletes one row of an embedded table by its primary key; returns its link value, undefined when no row. */
export async function deleteEmbedRow(db: Db, embed: EmbeddedTable, key: unknown): Promise<{ links: string[] } | undefined> {
  await flagEmbed(db, embed);
  const r = (await db.deleteFrom(embed.table).where(embed.primaryKey, "=", key).returning(linkAsText(embed)).execute()) as Row[];
  await flagEmbed(db, undefined);
  return r.length === 0 ? undefined : { links: uniq(r.map((x) => withLink(x).link)) };
}

// --- The drainer's expansion -------------------------------------------------------------------

/** A claimed fan-out job: a claimed job without the claim's row position (its transaction updates it). */
export type FanoutJobRow = Omit<JobRow, "tid">;

/**
 * Claims up to `limit` due fan-out jobs of unpaused lanes among `names` (lowest priority first,
 * then by when they became due), with FOR UPDATE SKIP LOCKED: the row lock is the lease, as for
 * sync jobs. Sets the transaction's deadline (statement_timeout) like the sync claim.
 */
export async function claimFanouts(trx: Db, names: readonly string[], opts: { limit: number; deadlineMs: number }): Promise<FanoutJobRow[]> {
  const r = await sql<FanoutJobRow & { limits: unknown }>`
    WITH limits AS MATERIALIZED (
      SELECT set_config('idle_in_transaction_session_timeout', ${String(opts.deadlineMs + 10_000)}, true),
             set_config('statement_timeout', ${String(opts.deadlineMs)}, true),
             set_config('lock_timeout', '5000', true)
    )
    SELECT j.id::text AS id, j.name, j.priority, j.tag, j.kwargs, j.attempts FROM tether.job j, limits
    WHERE starts_with(j.name, 'fanout_') AND j.name = ANY(${[...names]}::text[])
      AND j.scheduled_at <= now() AND j.expires_at > now()
      AND NOT EXISTS (SELECT FROM tether.paused_name pn WHERE pn.name = j.name)
    ORDER BY j.priority, j.scheduled_at, j.id
    LIMIT ${opts.limit}
    FOR UPDATE OF j SKIP LOCKED`.execute(trx);
  return r.rows.map(({ limits: _limits, ...job }) => job);
}

/** How many live documents a link value of `embed` reaches (a fan-out's progress total). */
export async function countReached(trx: Db, collection: Collection<any>, embed: EmbeddedTable, link: string): Promise<number> {
  const r = await sql<{ n: string }>`
    SELECT count(*)::text AS n FROM ${sql.table(collection.table)} AS t WHERE ${reachedBy(collection, embed, link)} AND ${liveDocument(collection)}`.execute(trx);
  return Number(r.rows[0]?.n ?? 0);
}

/** What one chunk of a fan-out did. */
export interface ExpandedChunk {
  /** Documents bumped (each given its sync job). */
  bumped: number;
  /** The last id bumped: where the next chunk starts. */
  last: string | undefined;
  /** Every document the link value reaches after `after` was bumped: the fan-out is done. */
  complete: boolean;
  /** The chunk stopped before a document another transaction holds locked (the next chunk starts with it). */
  blocked: boolean;
}

/**
 * One chunk of a fan-out: the next `limit` live documents (in id order, after `after`) reached
 * by `link`, locked, their versions bumped (`tether.next_version`) and a sync job enqueued for
 * each, in one statement. Run inside the caller's transaction with the capture hand-shake set.
 *
 * A document an application transaction holds locked is never waited for (the expansion holds
 * the chunk's other rows: waiting could close a deadlock on the application's side, which would
 * then fail): the chunk locks what is free and bumps the documents before the first held one,
 * so the progress saved (`last`) never passes a document that was not bumped.
 */
export async function expandChunk(
  trx: Db,
  collection: Collection<any>,
  embed: EmbeddedTable,
  fanout: { id: string; link: string; after: string | undefined; limit: number; tag: string; priority: number },
): Promise<ExpandedChunk> {
  const t = (c: string) => ref("t", c);
  const after = fanout.after === undefined ? sql`true` : sql`${t(collection.idColumn)} > ${fanout.after}`;
  const via = JSON.stringify({ table: embed.table, column: embed.linkColumn, value: fanout.link, fanout: fanout.id } satisfies EmbedVia);
  const reached = sql`${reachedBy(collection, embed, fanout.link)} AND ${liveDocument(collection)}`;
  await sql`SELECT set_config(${WRITER_SETTING}, ${collection.name}, true)`.execute(trx);
  const r = await sql<{ n: number; reached: number; last: string | null; blocked: boolean }>`
    WITH reach AS MATERIALIZED (
      SELECT ${t(collection.idColumn)} AS id FROM ${sql.table(collection.table)} AS t
      WHERE ${reached} AND ${after}
      ORDER BY ${t(collection.idColumn)} LIMIT ${fanout.limit}
    ), ids AS MATERIALIZED (
      SELECT ${t(collection.idColumn)} AS id FROM ${sql.table(collection.table)} AS t
      WHERE ${t(collection.idColumn)} = ANY(ARRAY(SELECT reach.id FROM reach)) AND ${reached}
      FOR UPDATE OF t SKIP LOCKED
    ), gap AS MATERIALIZED (
      -- The first document not locked: held by another transaction (or changed since the read).
      -- ORDER BY, not min(): a uuid has no min().
      SELECT reach.id FROM reach WHERE NOT EXISTS (SELECT 1 FROM ids WHERE ids.id = reach.id) ORDER BY reach.id LIMIT 1
    ), take AS MATERIALIZED (
      SELECT ids.id FROM ids WHERE ids.id < ALL (SELECT gap.id FROM gap)
    ), b AS (
      -- By the ids as an array, not joined to the CTE: the planner's guess at the CTE's size made it
      -- hash the whole table for every chunk (a scan of the table per chunk); this walks the primary key.
      UPDATE ${sql.table(collection.table)} AS t SET ${sql.ref(collection.versionColumn)} = tether.next_version(${t(collection.versionColumn)})
      WHERE ${t(collection.idColumn)} = ANY(ARRAY(SELECT take.id FROM take))
      RETURNING ${t(collection.idColumn)}::text AS id
    ), j AS (
      INSERT INTO tether.job (name, scheduled_at, priority, tag, kwargs)
      SELECT ${collection.jobName}, now(), ${fanout.priority}, ${fanout.tag}, jsonb_build_object('id', b.id, 'via', ${via}::jsonb) FROM b
    )
    SELECT (SELECT count(*) FROM b)::int AS n, (SELECT count(*) FROM reach)::int AS reached,
           (SELECT take.id::text FROM take ORDER BY take.id DESC LIMIT 1) AS last, EXISTS (SELECT 1 FROM gap) AS blocked`.execute(trx);
  await sql`SELECT set_config(${WRITER_SETTING}, '', true)`.execute(trx);
  const row = r.rows[0];
  const blocked = row?.blocked === true;
  return { bumped: Number(row?.n ?? 0), last: row?.last ?? undefined, complete: !blocked && Number(row?.reached ?? 0) < fanout.limit, blocked };
}

/** Saves a fan-out's progress in its job (due again at once, no attempt counted). */
export async function advanceFanout(trx: Db, id: string, progress: { after: string; done: number; total: number }): Promise<void> {
  await sql`UPDATE tether.job SET kwargs = kwargs || ${JSON.stringify(progress)}::jsonb, last_error = NULL WHERE id = ${id}::bigint`.execute(trx);
}

/**
 * A finished fan-out: its change is expanded (unless a newer change of the same link value is
 * pending: that one's fan-out finishes it), and its job is gone.
 */
export async function finishFanout(trx: Db, id: string, embed: EmbeddedTable, link: string, version: number): Promise<void> {
  // NOWAIT: an application transaction recording a newer change of the link holds the row, and
  // the expansion holds the chunk's documents; waiting could close a deadlock on its side. The
  // caller keeps the fan-out for later (lock_not_available).
  await sql`SELECT 1 FROM tether.embed_change WHERE embed = ${embed.path} AND link = ${link} FOR UPDATE NOWAIT`.execute(trx);
  await sql`
    WITH d AS (DELETE FROM tether.job WHERE id = ${id}::bigint)
    UPDATE tether.embed_change SET expanded = greatest(expanded, version)
    WHERE embed = ${embed.path} AND link = ${link} AND version = ${version}::bigint`.execute(trx);
}

/** Whether a newer change of the link value than `version` exists (its own fan-out covers this one's documents). */
export async function supersededFanout(trx: Db, embed: EmbeddedTable, link: string, version: number): Promise<boolean> {
  const r = await sql<{ newer: boolean }>`
    SELECT EXISTS (SELECT 1 FROM tether.embed_change WHERE embed = ${embed.path} AND link = ${link} AND version > ${version}::bigint) AS newer`.execute(trx);
  return r.rows[0]?.newer === true;
}

/** Runs `fn` in a savepoint: a failed statement rolls back to it and leaves the transaction usable. */
export async function inSavepoint<T>(trx: Db, fn: () => Promise<T>): Promise<T> {
  await sql`SAVEPOINT tether_fanout`.execute(trx);
  try {
    const out = await fn();
    await sql`RELEASE SAVEPOINT tether_fanout`.execute(trx);
    return out;
  } catch (err) {
    await sql`ROLLBACK TO SAVEPOINT tether_fanout`.execute(trx);
    throw err;
  }
}

// --- Reads for the drain pass and verify -------------------------------------------------------

/** The ids among `ids` whose document reads a row with a change still to expand (see pendingChange). */
export async function documentsWithPendingChanges(db: Db, collection: Collection<any>, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0 || collection.fanoutJobName === undefined) return new Set();
  const r = await sql<{ id: string }>`
    SELECT ${ref("t", collection.idColumn)}::text AS id FROM ${sql.table(collection.table)} AS t
    WHERE ${ref("t", collection.idColumn)} = ANY(${arrayLiteral(ids)}) AND ${pendingChange(collection)}`.execute(db);
  return new Set(r.rows.map((x) => x.id));
}

/** Pending changes of the collection's embeds with no fan-out job left to expand them (nor a parked one). */
export async function lostFanouts(db: Db, collection: Collection<any>): Promise<{ embed: string; link: string; version: number }[]> {
  if (collection.fanoutJobName === undefined) return [];
  const paths = Object.values(collection.embeds).filter((e) => !e.direct).map((e) => e.path);
  const prefix = `${collection.name}.`;
  const r = await sql<{ embed: string; link: string; version: string }>`
    WITH queued AS (
      SELECT kwargs->>'embed' AS embed, kwargs->>'link' AS link FROM tether.job WHERE starts_with(name, 'fanout_') AND name = ${collection.fanoutJobName}
      UNION SELECT kwargs->>'embed', kwargs->>'link' FROM tether.dead_job WHERE name = ${collection.fanoutJobName} AND reason = 'parked'
    )
    SELECT substr(ec.embed, ${prefix.length + 1}) AS embed, ec.link, ec.version::text AS version
    FROM tether.embed_change ec
    WHERE ec.embed = ANY(${paths}::text[]) AND ec.version > ec.expanded
      AND NOT EXISTS (SELECT 1 FROM queued q WHERE q.embed = substr(ec.embed, ${prefix.length + 1}) AND q.link = ec.link)`.execute(db);
  return r.rows.map((x) => ({ embed: x.embed, link: x.link, version: Number(x.version) }));
}

/**
 * Live documents below a finished change of a row they read (an expansion that skipped them),
 * with no change of theirs still pending. Up to `limit` ids.
 */
export async function documentsBehindChanges(db: Db, collection: Collection<any>, limit: number): Promise<string[]> {
  const fanouts = Object.values(collection.embeds).filter((e) => !e.direct);
  if (fanouts.length === 0) return [];
  const t = (c: string) => ref("t", c);
  const parts = fanouts.map((e) => {
    const { joins, link } = reachingJoins(collection, e);
    return sql`SELECT ${t(collection.idColumn)} AS id FROM ${sql.table(collection.table)} AS t ${joins}
      JOIN tether.embed_change ec ON ec.embed = ${e.path} AND ec.link = (${link})::text
      WHERE ec.version <= ec.expanded AND ${t(collection.versionColumn)} < ec.version AND ${liveDocument(collection)}`;
  });
  const r = await sql<{ id: string }>`
    SELECT DISTINCT b.id::text AS id FROM (${sql.join(parts, sql` UNION ALL `)}) AS b
    JOIN ${sql.table(collection.table)} AS t ON ${t(collection.idColumn)} = b.id
    WHERE NOT ${pendingChange(collection)}
    LIMIT ${limit}`.execute(db);
  return r.rows.map((x) => x.id);
}

/** Re-enqueues the fan-out of a lost change (verify's repair). */
export async function requeueFanout(db: Db, collection: Collection<any>, embed: EmbeddedTable, link: string, version: number, tag: string, priority: number): Promise<void> {
  await sql`
    INSERT INTO tether.job (name, priority, tag, kwargs)
    VALUES (${collection.fanoutJobName!}, ${priority}, ${tag}, jsonb_build_object('embed', ${embed.name}::text, 'link', ${link}::text, 'version', ${version}::bigint))`.execute(db);
  await sql`SELECT pg_notify(${WAKE_CHANNEL}, ${collection.fanoutJobName!})`.execute(db);
}

/** Bumps the versions of live documents and enqueues their sync jobs (verify's repair of documents behind a change). */
export async function bumpDocuments(db: Db, collection: Collection<any>, ids: readonly string[], job: { tag: string; priority: number }): Promise<number> {
  if (ids.length === 0) return 0;
  const t = (c: string) => ref("t", c);
  const r = await sql`
    WITH flag AS MATERIALIZED (SELECT set_config(${WRITER_SETTING}, ${collection.name}, true) AS f),
    b AS (
      UPDATE ${sql.table(collection.table)} AS t SET ${sql.ref(collection.versionColumn)} = tether.next_version(${t(collection.versionColumn)})
      FROM flag WHERE flag.f IS NOT NULL AND ${t(collection.idColumn)} = ANY(ARRAY(
        -- Rows an application transaction holds are skipped, never waited for (the next verify finds them again).
        SELECT ${t(collection.idColumn)} FROM ${sql.table(collection.table)} AS t
        WHERE ${t(collection.idColumn)} = ANY(${arrayLiteral(ids)}) AND ${liveDocument(collection)} FOR UPDATE OF t SKIP LOCKED))
      RETURNING ${t(collection.idColumn)}::text AS id
    )
    INSERT INTO tether.job (name, priority, tag, kwargs) SELECT ${collection.jobName}, ${job.priority}, ${job.tag}, jsonb_build_object('id', b.id) FROM b`.execute(db);
  await sql`SELECT set_config(${WRITER_SETTING}, '', true)`.execute(db);
  await sql`SELECT pg_notify(${WAKE_CHANNEL}, ${collection.jobName})`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** Removes finished changes older than `retentionMs` (maintenance); returns how many. */
export async function pruneEmbedChanges(db: Db, retentionMs: number, limit = 10_000): Promise<number> {
  const r = await sql`
    DELETE FROM tether.embed_change WHERE ctid = ANY(ARRAY(
      SELECT ctid FROM tether.embed_change WHERE version <= expanded AND changed_at < now() - ${retentionMs} * interval '1 millisecond' LIMIT ${limit}
      -- A row an application transaction is recording a change on is skipped, never waited for.
      FOR UPDATE SKIP LOCKED))`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}
