import type { Kysely } from "kysely";
import { FANOUT_TAG_PREFIX, REINDEX_TAG_PREFIX } from "../job.js";
import { aggregateDeadJobs } from "../store/dead-job-store.js";
import { fanoutProgress, type FanoutInProgress } from "../store/fanout-progress-store.js";
import { aggregateJobs } from "../store/job-store.js";
import { pausedLanes, type PausedLane } from "../store/paused-lane-store.js";
import type { LaneLength, QueueSampleFigures } from "../store/queue-sample-store.js";

/**
 * The queue read model: every figure `/admin/queue`, `tether status`, `/metrics` (through the
 * maintenance sample) and the alerts report about tether.job and tether.dead_job is computed
 * here, once, by `readQueue`. `queueStats` and `readQueueGauges` are two views of it. The
 * definitions are documented in docs/queue-figures.md; keep the two in step.
 */

/**
 * True for tags of fan-out work: the jobs a change of an embedded table enqueued (tags starting
 * with "fanout:": the fan-out jobs, and the sync jobs they or a direct embed's change enqueued).
 */
export function isFanoutTag(tag: string): boolean {
  return tag.startsWith(FANOUT_TAG_PREFIX);
}

/**
 * True for tags of live (write-path) traffic: neither admin re-index work (tags starting with
 * "reindex") nor fan-out work (tags starting with "fanout:"). Only live work pages through the
 * queue-length and oldest-due alerts.
 */
export function isLiveTag(tag: string): boolean {
  return !tag.startsWith(REINDEX_TAG_PREFIX) && !isFanoutTag(tag);
}

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

export type { FanoutInProgress, LaneLength, PausedLane };

/** Every figure of the queue at one instant. */
export interface QueueReadModel extends QueueCounts {
  /** The database clock the counts were taken at (or the pinned `now`). */
  at: Date;
  /** Expired jobs still in tether.job plus those swept to tether.dead_job. */
  expiredTotal: number;
  /** tether.dead_job rows with reason "expired". */
  expiredDead: number;
  /** tether.dead_job rows with reason "parked". */
  parked: number;
  /** Unexpired jobs (due or not) of live tags. */
  liveLength: number;
  /** Unexpired jobs of every tag, re-index and fan-out work included. */
  totalLength: number;
  /**
   * Seconds the oldest unexpired live job has waited for the downstream; null when none waits.
   * A job never attempted waits since it became due (scheduled_at). A job that failed and is
   * backing off has had scheduled_at moved forward, so it waits since it was enqueued (an
   * over-estimate by at most the write path's grace period): a downstream outage keeps this
   * figure growing although every retry reschedules. Paused lanes count; re-index and fan-out
   * work do not.
   */
  oldestDueAgeSeconds: number | null;
  /** Unexpired jobs (due or not) of fan-out tags: fan-out jobs and the sync jobs changes of embedded tables enqueued. */
  fanoutLength: number;
  /**
   * `oldestDueAgeSeconds`'s definition over fan-out tags: how long the oldest fan-out work has
   * waited (a fan-out job in progress keeps the scheduled_at of its change, so this counts from
   * the change until its last chunk is expanded). null when none waits.
   */
  fanoutOldestDueAgeSeconds: number | null;
  /** The fan-out jobs in the queue with their progress, the next to run first (at most 100). */
  fanouts: FanoutInProgress[];
  lanes: LaneLength[];
  /**
   * Every (name, tag, priority) present in tether.job, expired-only ones included, with its
   * counts and the same oldest-wait definition as `oldestDueAgeSeconds` (any tag).
   */
  groups: LaneGroup[];
  byName: ({ name: string } & GroupCounts)[];
  byTag: ({ tag: string } & GroupCounts)[];
  byPriority: ({ priority: number } & GroupCounts)[];
  paused: PausedLane[];
}

export interface QueueStatsOptions {
  /** Pin the clock (tests). Defaults to the database's now(). */
  now?: Date;
}

const emptyGroup = (): GroupCounts => ({ total: 0, due: 0, future: 0, expired: 0, dead: { parked: 0, expired: 0 } });

/**
 * Reads the queue in four statements: one GROUPING SETS scan of tether.job, one of
 * tether.dead_job, the paused lanes, and the fan-out jobs' progress (on their partial index).
 * Every count is computed in Postgres; JS only merges the handful of group rows.
 *
 * @example
 * const q = await readQueue(db);
 * console.log(q.liveLength, q.oldestDueAgeSeconds, q.byTag);
 */
/** One (name, tag, priority) of tether.job: counts and how long its oldest waiting job has waited. */
export interface LaneGroup extends QueueCounts {
  name: string;
  tag: string;
  priority: number;
  /** Seconds, as `oldestDueAgeSeconds` defines them; null when none of the group waits. */
  oldestDueAgeSeconds: number | null;
}

export async function readQueue(db: Kysely<any>, opts: QueueStatsOptions = {}): Promise<QueueReadModel> {
  const [jobs, dead, paused, fanouts] = await Promise.all([aggregateJobs(db, opts), aggregateDeadJobs(db), pausedLanes(db), fanoutProgress(db, opts)]);
  const groups = { name: new Map<string, GroupCounts>(), tag: new Map<string, GroupCounts>(), priority: new Map<string, GroupCounts>() };
  const group = (dim: keyof typeof groups, key: string) => {
    let g = groups[dim].get(key);
    if (!g) groups[dim].set(key, (g = emptyGroup()));
    return g;
  };
  const lanes: LaneLength[] = [];
  const laneGroups: LaneGroup[] = [];
  let all: (typeof jobs)[number] | undefined;
  let oldest: number | null = null;
  let fanoutOldest: number | null = null;
  for (const r of jobs) {
    const counts = { total: r.total, due: r.due, future: r.future, expired: r.expired };
    if (r.dim === "all") all = r;
    else if (r.dim === "lane") {
      laneGroups.push({ name: r.name!, tag: r.tag!, priority: r.priority!, ...counts, oldestDueAgeSeconds: r.oldestWaitSeconds === null ? null : Math.max(0, Math.round(r.oldestWaitSeconds * 10) / 10) });
      if (r.total > r.expired) lanes.push({ name: r.name!, tag: r.tag!, priority: r.priority!, length: r.total - r.expired, due: r.due });
      if (r.oldestWaitSeconds !== null) {
        if (isLiveTag(r.tag!)) oldest = Math.max(oldest ?? 0, r.oldestWaitSeconds);
        else if (isFanoutTag(r.tag!)) fanoutOldest = Math.max(fanoutOldest ?? 0, r.oldestWaitSeconds);
      }
    } else if (r.dim === "priority") Object.assign(group("priority", String(r.priority)), counts);
    else Object.assign(group(r.dim, r.dim === "name" ? r.name! : r.tag!), counts);
  }
  let deadTotals: DeadCounts = { parked: 0, expired: 0 };
  for (const r of dead) {
    const counts = { parked: r.parked, expired: r.expired };
    if (r.dim === "all") deadTotals = counts;
    else if (r.key !== null) group(r.dim, r.key).dead = counts;
  }
  lanes.sort((a, b) => a.name.localeCompare(b.name) || a.tag.localeCompare(b.tag) || a.priority - b.priority);
  const sorted = (dim: keyof typeof groups) =>
    [...groups[dim].entries()].sort(([a], [b]) => (dim === "priority" ? Number(a) - Number(b) : a.localeCompare(b)));
  const expiredInQueue = all?.expired ?? 0;
  const seconds = (s: number | null) => (s === null ? null : Math.max(0, Math.round(s * 1000) / 1000));
  return {
    at: all?.at ?? opts.now ?? new Date(),
    total: all?.total ?? 0,
    due: all?.due ?? 0,
    future: all?.future ?? 0,
    expired: expiredInQueue,
    expiredTotal: expiredInQueue + deadTotals.expired,
    expiredDead: deadTotals.expired,
    parked: deadTotals.parked,
    liveLength: lanes.filter((l) => isLiveTag(l.tag)).reduce((a, l) => a + l.length, 0),
    totalLength: lanes.reduce((a, l) => a + l.length, 0),
    oldestDueAgeSeconds: seconds(oldest),
    fanoutLength: lanes.filter((l) => isFanoutTag(l.tag)).reduce((a, l) => a + l.length, 0),
    fanoutOldestDueAgeSeconds: seconds(fanoutOldest),
    fanouts,
    lanes,
    groups: laneGroups.sort((a, b) => a.name.localeCompare(b.name) || a.priority - b.priority || a.tag.localeCompare(b.tag)),
    byName: sorted("name").map(([name, g]) => ({ name, ...g })),
    byTag: sorted("tag").map(([tag, g]) => ({ tag, ...g })),
    byPriority: sorted("priority").map(([p, g]) => ({ priority: Number(p), ...g })),
    paused,
  };
}

/** The view `/admin/queue` and `tether status` print. */
export interface QueueStats {
  /** `at` as an ISO string. */
  at: string;
  total: number;
  due: number;
  future: number;
  /** `expiredTotal`. */
  expired: number;
  /** `expired`: past expires_at, still in tether.job. */
  expiredInQueue: number;
  expiredDead: number;
  parked: number;
  oldestDueAgeSeconds: number | null;
  /** Unexpired jobs of live tags (what the queue-length alert watches). */
  liveLength: number;
  fanoutLength: number;
  fanoutOldestDueAgeSeconds: number | null;
  /** The fan-out jobs in the queue with their progress (done / total), the next to run first (at most 100). */
  fanouts: FanoutInProgress[];
  byName: ({ name: string } & GroupCounts)[];
  byTag: ({ tag: string } & GroupCounts)[];
  byPriority: ({ priority: number } & GroupCounts)[];
  paused: PausedLane[];
}

/**
 * Queue health for operators, from the read model.
 *
 * @example
 * const s = await queueStats(db);
 * console.log(s.due, s.oldestDueAgeSeconds, s.byTag);
 */
export async function queueStats(db: Kysely<any>, opts: QueueStatsOptions = {}): Promise<QueueStats> {
  return queueStatsOf(await readQueue(db, opts));
}

/** `queueStats` of a read model already in hand (one scan serves several views). */
export function queueStatsOf(q: QueueReadModel): QueueStats {
  return {
    at: q.at.toISOString(),
    total: q.total,
    due: q.due,
    future: q.future,
    expired: q.expiredTotal,
    expiredInQueue: q.expired,
    expiredDead: q.expiredDead,
    parked: q.parked,
    oldestDueAgeSeconds: q.oldestDueAgeSeconds,
    liveLength: q.liveLength,
    fanoutLength: q.fanoutLength,
    fanoutOldestDueAgeSeconds: q.fanoutOldestDueAgeSeconds,
    fanouts: q.fanouts,
    byName: q.byName,
    byTag: q.byTag,
    byPriority: q.byPriority,
    paused: q.paused,
  };
}

/** The view the gauges and the alerts use, and what a maintenance sample records. */
export type QueueGauges = QueueSampleFigures;

/**
 * The gauge figures of the read model: `oldestDueAgeSeconds` and `fanoutOldestDueAgeSeconds` are
 * 0 when none waits (a gauge has no null), `expired` is `expiredTotal`.
 *
 * @example
 * const g = await readQueueGauges(db);
 * console.log(g.liveLength, g.parked);
 */
export async function readQueueGauges(db: Kysely<any>, opts: QueueStatsOptions = {}): Promise<QueueGauges> {
  const q = await readQueue(db, opts);
  return {
    at: q.at,
    lanes: q.lanes,
    liveLength: q.liveLength,
    totalLength: q.totalLength,
    expired: q.expiredTotal,
    parked: q.parked,
    oldestDueAgeSeconds: q.oldestDueAgeSeconds ?? 0,
    fanoutLength: q.fanoutLength,
    fanoutOldestDueAgeSeconds: q.fanoutOldestDueAgeSeconds ?? 0,
  };
}
