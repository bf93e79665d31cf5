import { Type } from "typebox";
import {
  completionBuckets,
  evaluateAlerts,
  listHeartbeats,
  queueLengthSeries,
  configuredLanes,
  queueStats,
  queueStatsOf,
  readQueue,
} from "@tether/core/internal";
import type { AdminApp, AdminContext } from "../admin-context.js";
import { AnyObject, authErrors, Nullable, Timestamp } from "../schemas/common-schemas.js";
import { FanoutSchema } from "../schemas/fanout-schemas.js";

export const LaneGroupSchema = Type.Object({
  name: Type.String(), tag: Type.String(), priority: Type.Integer(), total: Type.Integer(), due: Type.Integer(), future: Type.Integer(), expired: Type.Integer(),
  oldestDueAgeSeconds: Nullable(Type.Number()),
});

export const LaneSchema = Type.Object({
  name: Type.String({ description: "Job name: each collection's sync lane, and its fan-out lane (fanout_<collection>) when it has fan-out embeds" }),
  collection: Nullable(Type.String()),
  kind: Nullable(Type.Union([Type.Literal("sync"), Type.Literal("fanout")], { description: "sync: the collection's sync jobs; fanout: its changes of embedded tables to expand; null: not configured" })),
  paused: Nullable(Type.Object({ pausedAt: Timestamp, reason: Nullable(Type.String()) })),
  total: Type.Integer(), due: Type.Integer(), future: Type.Integer(), expired: Type.Integer(),
  parked: Type.Integer({ description: "Dead-letter rows with reason parked" }),
  deadExpired: Type.Integer({ description: "Dead-letter rows with reason expired" }),
  oldestDueAgeSeconds: Nullable(Type.Number()),
  groups: Type.Array(LaneGroupSchema, { description: "By tag and priority" }),
});

export const OverviewSchema = Type.Object({
  at: Timestamp,
  totals: Type.Object({
    total: Type.Integer(), due: Type.Integer(), future: Type.Integer(), expired: Type.Integer(), parked: Type.Integer(),
    liveLength: Type.Integer({ description: "Unexpired jobs of live (write-path) tags" }),
    oldestDueAgeSeconds: Nullable(Type.Number({ description: "Of live work" })),
  }),
  fanout: Type.Object({
    length: Type.Integer({ description: "Unexpired jobs of fan-out tags (fanout:…): fan-out jobs and the sync jobs changes of embedded tables enqueued" }),
    oldestDueAgeSeconds: Nullable(Type.Number()),
    inProgress: Type.Array(FanoutSchema, { description: "The fan-out jobs in the queue with their progress, the next to run first (at most 100)" }),
  }, { description: "Fan-out work, apart from live work: it never trips the queue-length or oldest-due alerts" }),
  lanes: Type.Array(LaneSchema),
  completion: Type.Object({
    bucketSeconds: Type.Integer(),
    buckets: Type.Array(Type.Object({ at: Timestamp, name: Type.String(), confirmed: Type.Integer(), parked: Type.Integer(), expired: Type.Integer() })),
  }, { description: "Completions of the last hour, per lane, in buckets (the completion-rate chart)" }),
  queueLength: Type.Array(Type.Object({ at: Timestamp, liveLength: Type.Integer(), totalLength: Type.Integer(), fanoutLength: Type.Integer(), parked: Type.Integer(), expired: Type.Integer() }), {
    description: "Maintenance samples of the last hour (the queue-length chart)",
  }),
  alerts: Type.Object({
    firing: Type.Boolean(), at: Timestamp,
    alerts: Type.Array(Type.Object({ name: Type.String(), firing: Type.Boolean(), value: Type.Number(), threshold: Type.Number(), message: Type.String(), check: Type.Array(Type.String()) })),
  }),
  drainers: Type.Object({ alive: Type.Integer(), gone: Type.Integer() }),
});

export const CollectionSchema = Type.Object({
  name: Type.String(), jobName: Type.String(), index: Type.String(),
  scopes: Type.Array(Type.Object({ name: Type.String(), kind: Type.String(), description: Nullable(Type.String()) })),
});

/** Lanes as the overview and the lanes page show them. */
export async function readLanes(ctx: AdminContext) {
  const { db, collections } = ctx.options;
  // One read of the queue serves the totals and the per-lane groups, with one definition of each figure.
  const q = await readQueue(db);
  const stats = queueStatsOf(q);
  const groups = q.groups;
  const configured = configuredLanes(collections);
  const names = new Set<string>([...configured.map((l) => l.name), ...stats.byName.map((n) => n.name), ...stats.paused.map((p) => p.name)]);
  const lanes = [...names].sort().map((name) => {
    const lane = configured.find((l) => l.name === name);
    const counts = stats.byName.find((n) => n.name === name);
    const paused = stats.paused.find((p) => p.name === name);
    const own = groups.filter((g) => g.name === name);
    const ages = own.map((g) => g.oldestDueAgeSeconds).filter((a): a is number => a !== null);
    return {
      name,
      collection: lane?.collection ?? null,
      kind: lane?.kind ?? null,
      paused: paused ? { pausedAt: paused.pausedAt, reason: paused.reason } : null,
      total: counts?.total ?? 0,
      due: counts?.due ?? 0,
      future: counts?.future ?? 0,
      expired: counts?.expired ?? 0,
      parked: counts?.dead.parked ?? 0,
      deadExpired: counts?.dead.expired ?? 0,
      oldestDueAgeSeconds: ages.length ? Math.max(...ages) : null,
      groups: own,
    };
  });
  return { stats, lanes, q };
}

export async function overviewRoutes(app: AdminApp, ctx: AdminContext): Promise<void> {
  const { db, alertThresholds, collections, drainerStaleMs } = ctx.options;

  app.get("/overview", {
    schema: { summary: "Queue, charts, alerts and drainers at a glance", tags: ["overview"], response: { 200: OverviewSchema, ...authErrors } },
  }, async () => {
    const [{ stats, lanes, q }, buckets, series, alerts, drainers] = await Promise.all([
      readLanes(ctx),
      completionBuckets(db, 60, 60),
      queueLengthSeries(db, 60, 500),
      evaluateAlerts(db, alertThresholds, { collections: collections.map((c) => c.name) }),
      listHeartbeats(db, { withinSeconds: 86_400, limit: 500 }),
    ]);
    const alive = drainers.filter((d) => !d.stoppedAt && d.ageSeconds * 1000 <= drainerStaleMs).length;
    return {
      at: stats.at,
      totals: { total: stats.total, due: stats.due, future: stats.future, expired: stats.expired, parked: stats.parked, liveLength: q.liveLength, oldestDueAgeSeconds: stats.oldestDueAgeSeconds },
      fanout: { length: q.fanoutLength, oldestDueAgeSeconds: q.fanoutOldestDueAgeSeconds, inProgress: q.fanouts },
      lanes,
      completion: { bucketSeconds: 60, buckets },
      queueLength: series,
      alerts: { ...alerts, at: alerts.at.toISOString() },
      drainers: { alive, gone: drainers.length - alive },
    };
  });

  app.get("/collections", {
    schema: { summary: "Configured collections and their re-index scopes", tags: ["overview"], response: { 200: Type.Object({ items: Type.Array(CollectionSchema) }), ...authErrors } },
  }, async () => ({
    items: collections.map((c) => ({
      name: c.name,
      jobName: c.jobName,
      index: c.index,
      scopes: [{ name: "all", kind: "all", description: "every entity" }, ...Object.entries(c.reindexScopes).map(([name, s]) => ({ name, kind: s.kind, description: s.description ?? null }))],
    })),
  }));

  /** Counts by name, tag and priority; due, future, expired, parked; oldest due age; paused lanes. */
  app.get("/queue", { schema: { summary: "Queue counts (the documented /admin/queue contract)", tags: ["overview"], response: { 200: AnyObject, ...authErrors } } }, async () => queueStats(db));

  app.get("/alerts", { schema: { summary: "Tether's own alert evaluation", tags: ["overview"], response: { 200: AnyObject, ...authErrors } } }, async () =>
    evaluateAlerts(db, alertThresholds, { collections: collections.map((c) => c.name) }),
  );
}
