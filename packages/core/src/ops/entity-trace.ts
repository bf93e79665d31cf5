import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { canonicalEntityId } from "../entity-id.js";
import { ValidationError } from "../errors.js";
import type { Sink } from "../sink.js";
import { idColumnType } from "../store/collection-store.js";
import { listDeadJobsPage } from "../store/dead-job-admin-store.js";
import type { DeadJob } from "./dead-jobs.js";
import { listEntityEvents, type EntityEvent } from "../store/entity-event-store.js";
import { readEntityRow } from "../store/entity-row-store.js";
import { documentFanouts, type DocumentFanouts } from "../store/fanout-progress-store.js";
import type { EmbedVia } from "../job.js";
import { listQueuedJobs, type QueuedJob } from "../store/queued-job-store.js";
import { classifyDrift } from "../verify/verification-matrix.js";

/**
 * What the entity trace concludes. missing: live in Postgres, absent or tombstoned downstream;
 * stale/ahead: versions differ; content_differs: same version, other content; ghost: only
 * downstream; deleted_live: deleted in Postgres, live downstream; unknown: the downstream could
 * not be asked. The admin console's schema (`TraceVerdictSchema`) lists the same.
 */
export const TRACE_VERDICTS = ["in_sync", "deleted_in_sync", "absent", "missing", "stale", "ahead", "content_differs", "ghost", "deleted_live", "unknown"] as const;
export type TraceVerdict = (typeof TRACE_VERDICTS)[number];

/**
 * The entity trace: "why is X (not) in the downstream?", one definition for the admin console
 * (GET /admin/trace/:collection/:id, its page) and `tether trace`.
 */
export interface EntityTrace {
  collection: string;
  jobName: string;
  index: string;
  id: string;
  postgres: { exists: boolean; version: number | null; deleted: boolean; row: Record<string, unknown> | null };
  downstream: { reachable: boolean; exists: boolean; version: number | null; deleted: boolean; contentMatches: boolean | null; error: string | null };
  verdict: TraceVerdict;
  explanation: string;
  /**
   * The re-index that repairs this verdict (the console's "Re-index this entity…" sends it), or
   * null when there is nothing to repair. Content drift at the row's own version needs `force`:
   * an unforced job finds the versions equal and confirms the document as it is.
   */
  repair: EntityRepair | null;
  /** Jobs pending for it; one a change of an embedded table enqueued says which row, and which fan-out (`via`). */
  pendingJobs: QueuedJob[];
  deadJobs: (DeadJob & { entityId: string | null })[];
  /** Its history; a job a change of an embedded table enqueued keeps its `via`, and its tag says `fanout:<embed>.<op>`. */
  events: EntityEvent[];
  /**
   * Why the document will be re-synced from a table it reads: the rows of its fan-out embeds it
   * reads now, the changes of those rows still to expand (tether.embed_change), and the fan-out
   * jobs queued for them with their progress and whether they have reached it yet.
   */
  fanout: DocumentFanouts;
}

export interface EntityRepair {
  /** Rewrite the document even though it holds the row's version (still verified by reading back). */
  force: boolean;
  /** What the repair does, for the confirmation. */
  note: string;
}

const NOTHING_TO_REPAIR = new Set<TraceVerdict>(["in_sync", "deleted_in_sync", "absent"]);

/** One definition of what repairs a verdict, for the API and the page alike. */
export function repairFor(verdict: TraceVerdict): EntityRepair | null {
  if (NOTHING_TO_REPAIR.has(verdict)) return null;
  if (verdict === "content_differs") {
    return { force: true, note: "Enqueues one forced job, due now: the document is rewritten from the row at the same version, then verified by reading it back." };
  }
  return { force: false, note: "Enqueues one job for it, due now, verified by reading back." };
}

interface DocumentReader {
  readDocument(index: string, id: string): Promise<Record<string, unknown> | undefined>;
}
const canReadDocuments = (s: Sink): s is Sink & DocumentReader => typeof (s as Partial<DocumentReader>).readDocument === "function";

/** JSON with sorted keys, so documents compare by content, not key order. */
function canonical(v: unknown): string {
  const norm = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(norm);
    if (x && typeof x === "object") return Object.fromEntries(Object.keys(x).sort().map((k) => [k, norm((x as Record<string, unknown>)[k])]));
    return x;
  };
  return JSON.stringify(norm(JSON.parse(JSON.stringify(v ?? null))));
}

function jsonRow(row: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(row, (_k, v) => (typeof v === "bigint" ? v.toString() : v))) as Record<string, unknown>;
}

/**
 * Answers "why is X (not) in the downstream?": both sides' versions, whether the document's
 * content matches the row, the jobs pending or dead for it, and its recent history.
 */
export async function traceEntity(db: Kysely<any>, sink: Sink, collection: Collection<any>, rawId: string): Promise<EntityTrace> {
  const idType = await idColumnType(db, collection);
  const c = canonicalEntityId(idType, rawId);
  if ("error" in c) throw new ValidationError("id", c.error);
  const id = c.id;
  const [entity, pendingJobs, deadJobs, events, fanout] = await Promise.all([
    readEntityRow(db, collection, id, idType),
    listQueuedJobs(db, { name: collection.jobName, entityId: id, limit: 50 }),
    listDeadJobsPage(db, { name: collection.jobName, entityId: id, limit: 20 }),
    listEntityEvents(db, collection.jobName, id, 50),
    documentFanouts(db, collection, id, idType),
  ]);

  const downstream: EntityTrace["downstream"] = { reachable: true, exists: false, version: null, deleted: false, contentMatches: null, error: null };
  let state: { version: number; deleted: boolean } | undefined;
  try {
    state = (await sink.fetchStates(collection.index, [id], { timeoutMs: 5_000, retries: 0 })).get(id);
    if (state) Object.assign(downstream, { exists: true, version: state.version, deleted: state.deleted });
    if (state && !state.deleted && entity && !entity.deleted && canReadDocuments(sink)) {
      const doc = await sink.readDocument(collection.index, id);
      if (doc) downstream.contentMatches = canonical(doc) === canonical(collection.toDocument(entity.row));
    }
  } catch (err) {
    Object.assign(downstream, { reachable: false, error: err instanceof Error ? err.message : String(err) });
  }

  const pg = entity ? { version: entity.version, live: !entity.deleted } : undefined;
  let verdict: TraceVerdict;
  if (!downstream.reachable) verdict = "unknown";
  else {
    const drift = classifyDrift(pg, state);
    if (drift === "stale") verdict = state!.version > pg!.version ? "ahead" : "stale";
    else if (drift && drift !== "embedded") verdict = drift;
    else if (!pg) verdict = "absent";
    else if (!pg.live) verdict = "deleted_in_sync";
    else verdict = downstream.contentMatches === false ? "content_differs" : "in_sync";
  }
  const due = pendingJobs[0];
  const pendingNote = due
    ? ` ${pendingJobs.length} job(s) pending; the first is ${due.state} (scheduled ${due.scheduledAt}, ${due.attempts} failed attempt(s)${due.lastError ? `, last error: ${due.lastError}` : ""}${due.via ? `, enqueued by ${viaText(due.via)}` : ""}): the drainer repairs it when it runs.`
    : deadJobs.length > 0
      ? ` No job is pending, but ${deadJobs.length} dead job(s) are (${deadJobs[0]!.reason}: ${deadJobs[0]!.lastError ?? "no error recorded"}): retry them once the cause is fixed.`
      : " No job is pending: re-index this id (or run verify) to repair it.";
  const v = (n: number | null) => (n === null ? "-" : `v${n}`);
  const explanations: Record<TraceVerdict, string> = {
    in_sync: `Postgres and Elasticsearch both hold ${v(pg?.version ?? null)}${downstream.contentMatches ? " with the same content" : ""}.`,
    deleted_in_sync: `Deleted in Postgres at ${v(pg?.version ?? null)}; Elasticsearch holds ${state ? `a tombstone at ${v(state.version)}` : "no document"}, as it should.`,
    absent: "Neither Postgres nor Elasticsearch has this entity.",
    missing: `Postgres has ${v(pg?.version ?? null)} (live) but Elasticsearch has ${state ? `only a tombstone (${v(state.version)})` : "no document: it was deleted behind Tether's back or never written"}.` + pendingNote,
    stale: `Elasticsearch holds ${v(state?.version ?? null)}, older than Postgres's ${v(pg?.version ?? null)}.` + pendingNote,
    ahead: `Elasticsearch holds ${v(state?.version ?? null)}, newer than Postgres's ${v(pg?.version ?? null)}: it was edited behind Tether's back.` + pendingNote,
    // An unforced job would find the versions equal and confirm the document as it is.
    content_differs: `Both sides hold ${v(pg?.version ?? null)}, but the document's content differs from what the row builds: it was changed behind Tether's back without a version bump. Only a forced re-index rewrites it (a job that is not forced confirms a document at the row's version as it is): "Re-index this entity" forces it, as does \`tether reindex --force\`.`,
    ghost: `Elasticsearch has a live document (${v(state?.version ?? null)}) for an id Postgres does not have.` + pendingNote,
    deleted_live: `Deleted in Postgres (${v(pg?.version ?? null)}) but still live in Elasticsearch (${v(state?.version ?? null)}).` + pendingNote,
    unknown: `Elasticsearch could not be asked: ${downstream.error ?? "unknown error"}.`,
  };
  const resync = fanoutNote(fanout, id);
  // Content that differs because a table the document reads changed since is not an edit behind Tether's back.
  if (fanout.pendingChanges.length > 0) {
    explanations.content_differs = `Both sides hold ${v(pg?.version ?? null)}, but the document's content differs from what the rows build now: a table it reads changed since it was written.`;
  }
  return {
    collection: collection.name,
    jobName: collection.jobName,
    index: collection.index,
    id,
    postgres: { exists: !!entity, version: entity?.version ?? null, deleted: entity?.deleted ?? false, row: entity ? jsonRow(entity.row) : null },
    downstream,
    verdict,
    explanation: explanations[verdict] + (pg ? resync : ""),
    repair: repairFor(verdict),
    pendingJobs,
    deadJobs,
    events,
    fanout,
  };
}

/** A via as a sentence's object: "a change of shop_category.id = 7 (fan-out job 12)". */
export function viaText(via: EmbedVia): string {
  return `a change of ${via.table}.${via.column} = ${via.value}${via.fanout ? ` (fan-out job ${via.fanout})` : ""}`;
}

/** What the trace adds when a change of a table the document reads is still to reach it. */
function fanoutNote(f: DocumentFanouts, id: string): string {
  const sentences = f.pendingChanges.map((c) => {
    const change = `A change of ${c.table}.${c.column} = ${c.value} (embed ${c.embed}, ${c.changedAt}) is still to reach this document`;
    if (c.fanout === "parked") return `${change}: its fan-out job is parked (\`tether parked list\`); retry it once the cause is fixed.`;
    if (c.fanout === "lost") return `${change}, and no fan-out job is left to expand it: \`tether verify\` enqueues it again.`;
    const job = f.fanouts.find((j) => j.embed === c.embed && j.link === c.value);
    if (!job) return `${change}: its fan-out job is queued.`;
    const progress = `${job.done} of ${job.total ?? "?"} document(s) done, ${job.attempts} failed attempt(s)${job.lastError ? `, last error: ${job.lastError}` : ""}`;
    return job.reached
      ? `${change}: fan-out job ${job.id} (${progress}) has bumped ${id} already; its sync job rewrites it.`
      : `${change}: fan-out job ${job.id} (${job.state}, ${progress}) bumps it and enqueues its sync job when it gets there; a drain pass meanwhile rewrites it rather than confirm it as it stands.`;
  });
  return sentences.length ? ` ${sentences.join(" ")}` : "";
}
