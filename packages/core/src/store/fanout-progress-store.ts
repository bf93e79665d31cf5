import { sql, type Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { pinnedClock } from "./pinned-clock.js";
import { reachingJoins } from "./embed-chain.js";

/**
 * Operators' reads of fan-out work (see ../fan-out-rule.ts): the fan-out jobs in the queue with
 * their progress (the queue read model lists them for `tether status` and the console), and what
 * of it concerns one document (the console's entity trace). The drainer's own statements on
 * fan-out jobs and tether.embed_change are in embed-store.ts.
 */

type Db = Kysely<any>;

/** A fan-out job in the queue, with its progress. */
export interface FanoutInProgress {
  /** The fan-out job's id (the sync jobs it enqueued name it in their kwargs.via.fanout). */
  id: string;
  /** Its lane: `fanout_<collection>`. */
  name: string;
  /** The collection whose documents it reaches. */
  collection: string;
  /** The embed whose row changed (its name in the collection's `embeds`). */
  embed: string;
  /** The changed row's link value, as text. */
  link: string;
  tag: string;
  priority: number;
  /** Documents bumped and given a sync job so far. */
  done: number;
  /** Documents it reaches, counted once its first chunk came back full; null before (a fan-out of one chunk finishes without it). */
  total: number | null;
  /** Failed expansion attempts (each backs off; at the drainer's maxAttempts the job is parked). */
  attempts: number;
  lastError: string | null;
  /** When the change that enqueued it committed. */
  enqueuedAt: string;
  /** Seconds since then, on the database clock (or the pinned `now`). */
  ageSeconds: number;
  /** due (claimable), future (backing off, or its embed's delayMs ahead), or expired. */
  state: "due" | "future" | "expired";
}

const FANOUT_PREFIX = "fanout_";

interface FanoutJobRecord {
  id: string;
  name: string;
  tag: string;
  priority: number;
  kwargs: Record<string, unknown>;
  attempts: number;
  last_error: string | null;
  enqueued_at: Date;
  age: number;
  state: FanoutInProgress["state"];
}

function fanoutOf(x: FanoutJobRecord): FanoutInProgress {
  return {
    id: String(x.id),
    name: x.name,
    collection: x.name.slice(FANOUT_PREFIX.length),
    embed: String(x.kwargs.embed ?? ""),
    link: String(x.kwargs.link ?? ""),
    tag: x.tag,
    priority: x.priority,
    done: Number(x.kwargs.done ?? 0),
    total: x.kwargs.total === undefined ? null : Number(x.kwargs.total),
    attempts: x.attempts,
    lastError: x.last_error,
    enqueuedAt: new Date(x.enqueued_at).toISOString(),
    ageSeconds: Math.round(Number(x.age) * 10) / 10,
    state: x.state,
  };
}

const fanoutColumns = (now: Date | undefined) => {
  const at = pinnedClock(now);
  return sql`j.id::text AS id, j.name, j.tag, j.priority, j.kwargs, j.attempts, j.last_error, j.enqueued_at,
    greatest(0, extract(epoch FROM ${at} - j.enqueued_at))::float8 AS age,
    CASE WHEN j.expires_at <= ${at} THEN 'expired' WHEN j.scheduled_at <= ${at} THEN 'due' ELSE 'future' END AS state`;
};

/**
 * The fan-out jobs in the queue, the next to run first (priority, then when due), at most
 * `limit` (default 100): the partial index of fan-out jobs serves it however many sync jobs wait.
 */
export async function fanoutProgress(db: Db, opts: { now?: Date; limit?: number } = {}): Promise<FanoutInProgress[]> {
  const r = await sql<FanoutJobRecord>`
    SELECT ${fanoutColumns(opts.now)} FROM tether.job j WHERE starts_with(j.name, ${FANOUT_PREFIX})
    ORDER BY j.priority, j.scheduled_at, j.id LIMIT ${opts.limit ?? 100}`.execute(db);
  return r.rows.map(fanoutOf);
}

/** A row of an embedded table one document reads through a fan-out embed. */
export interface ReachedLink {
  embed: string;
  table: string;
  column: string;
  /** The link value, as text. */
  value: string;
}

/** A change of a row a document reads, recorded in tether.embed_change and not yet expanded. */
export interface PendingEmbedChange extends ReachedLink {
  version: number;
  /** The version of the last change of this row whose fan-out finished (0: none). */
  expanded: number;
  changedAt: string;
  /** queued: its fan-out job waits in tether.job; parked: in the dead-letter table; lost: neither (verify enqueues it again). */
  fanout: "queued" | "parked" | "lost";
}

/** A fan-out job that reaches one document, and whether its expansion has passed that document yet. */
export interface FanoutReaching extends FanoutInProgress {
  /** True once a chunk bumped the document (expansion goes in id order); false while it is still to come. */
  reached: boolean;
}

export interface DocumentFanouts {
  /** Every row of a fan-out embed the document reads now (from its row and the tables it is reached through). */
  links: ReachedLink[];
  pendingChanges: PendingEmbedChange[];
  fanouts: FanoutReaching[];
}

/**
 * What fan-out work concerns the document `id` of `collection`: the rows of its fan-out embeds
 * it reads, the changes of those rows still to expand, and the fan-out jobs queued for them.
 * `id` must be canonical for `idType` (it is cast to the column's type, as readEntityRow does).
 */
export async function documentFanouts(db: Db, collection: Collection<any>, id: string, idType: string | undefined, opts: { now?: Date } = {}): Promise<DocumentFanouts> {
  const out: DocumentFanouts = { links: [], pendingChanges: [], fanouts: [] };
  const fanoutEmbeds = Object.values(collection.embeds).filter((e) => !e.direct);
  if (fanoutEmbeds.length === 0 || collection.fanoutJobName === undefined) return out;
  const cast = sql.raw(idType && /^[a-z][a-z0-9 ]*$/.test(idType) ? idType : "text");
  const t = (c: string) => sql.ref(`t.${c}`);
  const parts = fanoutEmbeds.map((e) => {
    const { joins, link } = reachingJoins(collection, e);
    return sql`SELECT ${e.name}::text AS embed, (${link})::text AS value FROM ${sql.table(collection.table)} AS t ${joins}
      WHERE ${t(collection.idColumn)} = ${id}::${cast} AND (${link}) IS NOT NULL`;
  });
  const reached = await sql<{ embed: string; value: string }>`
    SELECT DISTINCT embed, value FROM (${sql.join(parts, sql` UNION ALL `)}) AS r ORDER BY embed, value`.execute(db);
  out.links = reached.rows.map((r) => {
    const e = collection.embeds[r.embed]!;
    return { embed: r.embed, table: e.table, column: e.linkColumn, value: r.value };
  });
  if (out.links.length === 0) return out;
  const embeds = out.links.map((l) => l.embed);
  const values = out.links.map((l) => l.value);
  const paths = out.links.map((l) => collection.embeds[l.embed]!.path);
  const [changes, jobs] = await Promise.all([
    sql<{ embed: string; value: string; version: string; expanded: string; changed_at: Date; queued: boolean; parked: boolean }>`
      SELECT l.embed, l.value, ec.version::text AS version, ec.expanded::text AS expanded, ec.changed_at,
             EXISTS (SELECT 1 FROM tether.job j WHERE starts_with(j.name, ${FANOUT_PREFIX}) AND j.name = ${collection.fanoutJobName}
                     AND j.kwargs->>'embed' = l.embed AND j.kwargs->>'link' = l.value) AS queued,
             EXISTS (SELECT 1 FROM tether.dead_job d WHERE d.name = ${collection.fanoutJobName} AND d.reason = 'parked'
                     AND d.kwargs->>'embed' = l.embed AND d.kwargs->>'link' = l.value) AS parked
      FROM unnest(${embeds}::text[], ${values}::text[], ${paths}::text[]) AS l(embed, value, path)
      JOIN tether.embed_change ec ON ec.embed = l.path AND ec.link = l.value
      WHERE ec.version > ec.expanded
      ORDER BY ec.changed_at`.execute(db),
    sql<FanoutJobRecord & { reached: boolean }>`
      SELECT ${fanoutColumns(opts.now)},
             coalesce(j.kwargs ? 'after' AND ${id}::${cast} <= (j.kwargs->>'after')::${cast}, false) AS reached
      FROM tether.job j JOIN unnest(${embeds}::text[], ${values}::text[]) AS l(embed, value)
        ON j.kwargs->>'embed' = l.embed AND j.kwargs->>'link' = l.value
      WHERE starts_with(j.name, ${FANOUT_PREFIX}) AND j.name = ${collection.fanoutJobName}
      ORDER BY j.priority, j.scheduled_at, j.id`.execute(db),
  ]);
  out.pendingChanges = changes.rows.map((c) => {
    const e = collection.embeds[c.embed]!;
    return {
      embed: c.embed,
      table: e.table,
      column: e.linkColumn,
      value: c.value,
      version: Number(c.version),
      expanded: Number(c.expanded),
      changedAt: new Date(c.changed_at).toISOString(),
      fanout: c.queued ? "queued" : c.parked ? "parked" : "lost",
    };
  });
  out.fanouts = jobs.rows.map((j) => ({ ...fanoutOf(j), reached: j.reached === true }));
  return out;
}
