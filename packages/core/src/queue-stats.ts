import { sql, type Kysely } from "kysely";

/** Counts of the live table for one lane, tag or priority. */
export interface QueueCounts {
  /** Rows in tether.job. */
  total: number;
  /** Claimable now: scheduled_at <= now and expires_at > now. */
  due: number;
  /** Not yet due (grace period, backoff): scheduled_at > now and expires_at > now. */
  future: number;
  /** Past expires_at but not yet swept to tether.dead_job. */
  expired: number;
}

/** Counts of the dead-letter table for one lane, tag or priority. */
export interface DeadCounts {
  /** tether.dead_job rows with reason "parked" (a permanent failure, unknown name, bad kwargs). */
  parked: number;
  /** tether.dead_job rows with reason "expired" (swept after expires_at). */
  expired: number;
}

export type GroupCounts = QueueCounts & { dead: DeadCounts };

export interface PausedLane {
  name: string;
  pausedAt: string;
  reason: string | null;
}

export interface QueueStats {
  /** The database clock the counts were taken at (or the pinned `now`). */
  at: string;
  total: number;
  due: number;
  future: number;
  /** Every expired job: still in tether.job (`expiredInQueue`) plus swept (`expiredDead`). */
  expired: number;
  expiredInQueue: number;
  expiredDead: number;
  /** Dead-letter rows with reason "parked". */
  parked: number;
  /** Seconds since the longest-waiting due job became due (scheduled_at); null when none is due. */
  oldestDueAgeSeconds: number | null;
  byName: ({ name: string } & GroupCounts)[];
  byTag: ({ tag: string } & GroupCounts)[];
  byPriority: ({ priority: number } & GroupCounts)[];
  paused: PausedLane[];
}

export interface QueueStatsOptions {
  /** Pin the clock (tests). Defaults to the database's now(). */
  now?: Date;
}

type Dim = "name" | "tag" | "priority" | "all";

interface LiveAgg {
  dim: Dim;
  key: string | null;
  total: string;
  due: string;
  future: string;
  expired: string;
  oldest_due_age: number | null;
  at: Date;
}

interface DeadAgg {
  dim: Dim;
  key: string | null;
  parked: string;
  expired: string;
}

const emptyGroup = (): GroupCounts => ({ total: 0, due: 0, future: 0, expired: 0, dead: { parked: 0, expired: 0 } });

/**
 * Queue health in three statements: one GROUPING SETS scan of tether.job, one of
 * tether.dead_job, and the paused lanes. Every count is computed in Postgres; JS only merges the
 * handful of group rows.
 *
 * @example
 * const s = await queueStats(db);
 * console.log(s.due, s.oldestDueAgeSeconds, s.byTag);
 */
export async function queueStats(db: Kysely<any>, opts: QueueStatsOptions = {}): Promise<QueueStats> {
  const now = opts.now ? sql`${opts.now.toISOString()}::timestamptz` : sql`now()`;
  const [live, dead, paused] = await Promise.all([
    sql<LiveAgg>`
      SELECT CASE WHEN grouping(name) = 0 THEN 'name' WHEN grouping(tag) = 0 THEN 'tag'
                  WHEN grouping(priority) = 0 THEN 'priority' ELSE 'all' END AS dim,
             coalesce(name, tag, priority::text) AS key,
             count(*) AS total,
             count(*) FILTER (WHERE scheduled_at <= ${now} AND expires_at > ${now}) AS due,
             count(*) FILTER (WHERE scheduled_at > ${now} AND expires_at > ${now}) AS future,
             count(*) FILTER (WHERE expires_at <= ${now}) AS expired,
             extract(epoch FROM ${now} - min(scheduled_at) FILTER (WHERE scheduled_at <= ${now} AND expires_at > ${now}))::float8 AS oldest_due_age,
             ${now} AS at
      FROM tether.job
      GROUP BY GROUPING SETS ((name), (tag), (priority), ())`.execute(db),
    sql<DeadAgg>`
      SELECT CASE WHEN grouping(name) = 0 THEN 'name' WHEN grouping(tag) = 0 THEN 'tag'
                  WHEN grouping(priority) = 0 THEN 'priority' ELSE 'all' END AS dim,
             coalesce(name, tag, priority::text) AS key,
             count(*) FILTER (WHERE reason = 'parked') AS parked,
             count(*) FILTER (WHERE reason = 'expired') AS expired
      FROM tether.dead_job
      GROUP BY GROUPING SETS ((name), (tag), (priority), ())`.execute(db),
    sql<{ name: string; paused_at: Date; reason: string | null }>`
      SELECT name, paused_at, reason FROM tether.paused_name ORDER BY name`.execute(db),
  ]);

  const groups: Record<Exclude<Dim, "all">, Map<string, GroupCounts>> = { name: new Map(), tag: new Map(), priority: new Map() };
  const group = (dim: Exclude<Dim, "all">, key: string) => {
    let g = groups[dim].get(key);
    if (!g) groups[dim].set(key, (g = emptyGroup()));
    return g;
  };
  let totals: LiveAgg | undefined;
  for (const r of live.rows) {
    if (r.dim === "all") totals = r;
    else if (r.key !== null) Object.assign(group(r.dim, r.key), { total: Number(r.total), due: Number(r.due), future: Number(r.future), expired: Number(r.expired) });
  }
  let deadTotals = { parked: 0, expired: 0 };
  for (const r of dead.rows) {
    const counts = { parked: Number(r.parked), expired: Number(r.expired) };
    if (r.dim === "all") deadTotals = counts;
    else if (r.key !== null) group(r.dim, r.key).dead = counts;
  }
  const expiredInQueue = Number(totals?.expired ?? 0);
  const sorted = (dim: Exclude<Dim, "all">) =>
    [...groups[dim].entries()].sort(([a], [b]) => (dim === "priority" ? Number(a) - Number(b) : a.localeCompare(b)));
  return {
    at: new Date(totals?.at ?? opts.now ?? Date.now()).toISOString(),
    total: Number(totals?.total ?? 0),
    due: Number(totals?.due ?? 0),
    future: Number(totals?.future ?? 0),
    expired: expiredInQueue + deadTotals.expired,
    expiredInQueue,
    expiredDead: deadTotals.expired,
    parked: deadTotals.parked,
    oldestDueAgeSeconds: totals?.oldest_due_age === null || totals?.oldest_due_age === undefined ? null : Math.round(Number(totals.oldest_due_age) * 1000) / 1000,
    byName: sorted("name").map(([name, g]) => ({ name, ...g })),
    byTag: sorted("tag").map(([tag, g]) => ({ tag, ...g })),
    byPriority: sorted("priority").map(([p, g]) => ({ priority: Number(p), ...g })),
    paused: paused.rows.map((p) => ({ name: p.name, pausedAt: new Date(p.paused_at).toISOString(), reason: p.reason })),
  };
}
