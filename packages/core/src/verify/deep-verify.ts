import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { ValidationError } from "../errors.js";
import { resolveOptions, type OptionDefaults } from "../resolve-options.js";
import type { BucketRange, ScannedDocument, Sink, SinkCallOptions } from "../sink.js";
import { canonicalEntityId, idTypeClass } from "../entity-id.js";
import { idColumnType, loadRows, rowStates, rowStatesAfter } from "../store/collection-store.js";
import { insertJobs } from "../store/job-store.js";
import { idsWithQueuedJobs } from "../store/queued-job-store.js";
import { contentHash } from "./content-hash.js";
import { classifyDrift, rowVersion, type DriftKind } from "./verification-matrix.js";
import { embedDrift } from "./embed-drift.js";
import { settledDrift } from "./settled-drift.js";

/** An entity the scan found different, with the versions it was found at. */
interface ScannedDrift {
  id: string;
  force: boolean;
  kind: DeepDriftKind;
  rowVersion: number | undefined;
  docVersion: number | undefined;
}

/** What the deep comparison finds beyond versions: a body that differs at the same version, and documents without tether's metadata. */
export type DeepDriftKind = DriftKind | "content";

export interface DeepVerifyOptions {
  /** Only these ids (documents and rows). Default: the whole index. */
  ids?: readonly string[];
  /**
   * Only the entities whose bucket key (`entityKey`) lies in `[from, to)`, documents and rows: a
   * scheduled deep run reads one window of keys at a time and checkpoints after each. Documents
   * without tether's metadata have no key (orphans are not seen), nor have those written before
   * uuid and text ids had one (`countUnkeyed`): read the whole index for those. Embedded drift is
   * left to the caller. Default: every key.
   */
  range?: BucketRange;
  /**
   * An entity with a job of the collection still queued is not drift (a job describes it). Default
   * false; the scheduler sets it, as for the bucketed verify (`VerifyOptions.skipQueued`).
   */
  skipQueued?: boolean;
  /** Documents read per page. Default 5000. */
  pageSize?: number;
  /** Enqueue a repair job per drifted entity (content drift: a forced rewrite). Default true. */
  enqueue?: boolean;
  /** Leave documents without tether's metadata in the index (reported only). Default false: they are removed. */
  keepOrphans?: boolean;
  /** Priority of repair jobs. Default 500. */
  priority?: number;
  /** Tag of repair jobs. Default "verify". */
  tag?: string;
  /** Ids kept per kind as examples. Default 10. */
  sampleSize?: number;
  sinkOptions?: SinkCallOptions;
  /** After each page. */
  onProgress?: (p: { collection: string; scanned: number; drifted: number }) => void;
  /** Awaited after each page, e.g. to pace the run (the scheduler throttles here); a rejection stops it. */
  onPage?: (p: { collection: string; scanned: number; drifted: number }) => Promise<void>;
  /** The downstream index to read (default: the collection's own); see `VerifyOptions.index`. */
  index?: string;
  /** Repairs drift itself instead of enqueuing jobs; see `VerifyOptions.onDrift`. */
  onDrift?: (ids: string[]) => Promise<void>;
  signal?: AbortSignal;
}

export interface DeepVerifyReport {
  collection: string;
  /** Documents read from the index. */
  scanned: number;
  drifted: Record<DeepDriftKind, number>;
  driftedTotal: number;
  samples: Record<DeepDriftKind | "orphan", string[]>;
  /** Documents without tether's metadata (written by something else). */
  orphans: number;
  /** Of those, removed (0 with `keepOrphans`). */
  orphansRemoved: number;
  enqueued: number;
  durationMs: number;
  docsPerSecond: number;
}

export const DEEP_VERIFY_DEFAULTS: OptionDefaults<Pick<DeepVerifyOptions, "pageSize" | "enqueue" | "keepOrphans" | "priority" | "tag" | "sampleSize">> = {
  pageSize: [5_000, "positive integer"],
  enqueue: [true, "boolean"],
  keepOrphans: [false, "boolean"],
  priority: [500, "non-negative integer"],
  tag: ["verify", "non-empty string"],
  sampleSize: [10, "non-negative integer"],
};

/**
 * The deep verify: reads every document of the collection's index with its body (one
 * consistent snapshot, page by page), loads the rows of each page from Postgres (through the
 * collection's `load` when it has one), rebuilds each document and compares content, not only
 * versions. A document whose body differs from the rebuilt one at the same version (edited
 * behind tether's back, or a stored content hash that does not match its body) is `content`
 * drift and gets a forced rewrite; version drift is classified as the bucketed verify does.
 * Documents without tether's metadata are orphans: reported, and removed unless `keepOrphans`.
 * Then a pass over the rows in id order reports live rows that have no document as `missing`
 * (with `ids`, over those ids), so it needs no integer ids: it verifies uuid- or text-keyed
 * collections, which the bucketed verify cannot.
 *
 * @example
 * const report = await deepVerifyCollection(db, sink, products);
 * // { scanned: 1000000, drifted: { content: 2, missing: 0, ... }, orphans: 1, orphansRemoved: 1, docsPerSecond: 41000, ... }
 */
export async function deepVerifyCollection(db: Kysely<any>, sink: Sink, collection: Collection<any>, opts: DeepVerifyOptions = {}): Promise<DeepVerifyReport> {
  const started = performance.now();
  const o = resolveOptions(DEEP_VERIFY_DEFAULTS, opts);
  if (!sink.scanDocuments) throw new ValidationError("sink", `the ${sink.kind} sink cannot scan documents (deep verify)`);
  const sinkOpts: SinkCallOptions = { ...opts.sinkOptions, ...(opts.signal ? { signal: opts.signal } : {}) };
  const report: DeepVerifyReport = {
    collection: collection.name,
    scanned: 0,
    drifted: { missing: 0, stale: 0, ghost: 0, deleted_live: 0, embedded: 0, content: 0 },
    driftedTotal: 0,
    samples: { missing: [], stale: [], ghost: [], deleted_live: [], embedded: [], content: [], orphan: [] },
    orphans: 0,
    orphansRemoved: 0,
    enqueued: 0,
    durationMs: 0,
    docsPerSecond: 0,
  };
  const note = (kind: DeepDriftKind | "orphan", id: string) => {
    if (report.samples[kind].length < o.sampleSize) report.samples[kind].push(id);
  };

  const index = opts.index ?? collection.index;
  const repair = (ids: string[]): Promise<void> => (ids.length === 0 || !opts.onDrift ? Promise.resolve() : opts.onDrift(ids));
  await sink.refreshIndex?.(index);
  // A document whose id the id column cannot hold has no row: a ghost, without asking Postgres.
  const idType = await idColumnType(db, collection);
  const keying = { idType, hashed: idType !== undefined && idTypeClass(idType) !== "integer" };
  const queuedOf = (ids: readonly string[]) => idsWithQueuedJobs(db, collection.jobName, ids);
  /**
   * Reads again, realtime, the versions of what the scan found different: a version drift is
   * classified anew; a content drift stands while neither side's version moved (a write since
   * rebuilt the document: the next run judges its body).
   */
  const recheck = (first: ReadonlyMap<string, ScannedDrift>) => async (ids: readonly string[]): Promise<Map<string, ScannedDrift>> => {
    const [rowsNow, docsNow] = await Promise.all([rowStates(db, collection, keying, { ids: rowIds(ids) }), sink.fetchStates(index, ids, sinkOpts)]);
    const still = new Map<string, ScannedDrift>();
    for (const id of ids) {
      const row = rowsNow.get(id);
      const doc = docsNow.get(id);
      const kind = classifyDrift(row, doc);
      const was = first.get(id)!;
      if (kind) still.set(id, { ...was, kind, force: false, rowVersion: row?.version, docVersion: doc?.version });
      else if (was.kind === "content" && row?.version === was.rowVersion && doc?.version === was.docVersion) still.set(id, was);
    }
    return still;
  };
  const rowIds = (ids: readonly string[]) => ids.filter((id) => "id" in canonicalEntityId(idType, id));
  const seen = new Set<string>();
  const pending: Promise<unknown>[] = [];
  for await (const page of sink.scanDocuments(index, { pageSize: o.pageSize, ...(opts.ids ? { ids: opts.ids } : {}), ...(opts.range ? { range: opts.range } : {}) }, sinkOpts)) {
    opts.signal?.throwIfAborted();
    report.scanned += page.length;
    const orphans: ScannedDocument[] = [];
    const tethered: ScannedDocument[] = [];
    for (const d of page) (d.tethered ? tethered : orphans).push(d);
    for (const d of page) if (d.tethered) seen.add(d.id);
    const rows = await loadRows(db, collection, rowIds(tethered.map((d) => d.id)));
    const found = new Map<string, ScannedDrift>();
    for (const d of tethered) {
      const row = rows.get(d.id);
      const state = row === undefined ? undefined : { version: rowVersion(collection, row), live: !collection.isDeleted(row) };
      let kind: DeepDriftKind | undefined = classifyDrift(state, { version: d.version, deleted: d.deleted });
      if (!kind && state?.live && !d.deleted) {
        const stored = contentHash(d.source ?? {});
        if (stored !== contentHash(collection.toDocument(row)) || (d.content !== undefined && d.content !== stored)) kind = "content";
      }
      if (kind) found.set(d.id, { id: d.id, force: kind === "content", kind, rowVersion: state?.version, docVersion: d.version });
    }
    const repairs = [...(opts.skipQueued ? await settledDrift(found, recheck(found), queuedOf) : found).values()];
    for (const r of repairs) {
      report.drifted[r.kind] += 1;
      report.driftedTotal += 1;
      note(r.kind, r.id);
    }
    report.orphans += orphans.length;
    for (const d of orphans) note("orphan", d.id);
    if (orphans.length > 0 && !o.keepOrphans) {
      // No tether version to respect: one above the engine's own removes exactly what was read.
      const results = await sink.write(index, orphans.map((d) => ({ kind: "delete" as const, id: d.id, version: d.version + 1 })), sinkOpts);
      report.orphansRemoved += results.filter((r) => r.status === "ok").length;
    }
    if (opts.onDrift) pending.push(repair(repairs.map((r) => r.id)));
    else if (repairs.length > 0 && o.enqueue) {
      pending.push(
        insertJobs(db, repairs.map((r) => ({ name: collection.jobName, entityId: r.id, priority: o.priority, tag: o.tag, delayMs: 0, ...(r.force ? { force: true } : {}) }))).then(
          (ids) => (report.enqueued += ids.length),
        ),
      );
    }
    opts.onProgress?.({ collection: collection.name, scanned: report.scanned, drifted: report.driftedTotal });
    await opts.onPage?.({ collection: collection.name, scanned: report.scanned, drifted: report.driftedTotal });
  }
  {
    // Live rows with no live document at all (asked-for ones, or every row in id order).
    const missing: string[] = [];
    if (opts.ids) {
      const absent = opts.ids.filter((id) => !seen.has(id));
      const rows = await loadRows(db, collection, rowIds(absent));
      missing.push(...absent.filter((id) => rows.has(id) && !collection.isDeleted(rows.get(id)!)));
    } else if (opts.range) {
      for (const [id, r] of await rowStates(db, collection, keying, { range: opts.range })) if (r.live && !seen.has(id)) missing.push(id);
    } else {
      for (let after: string | undefined; ; ) {
        opts.signal?.throwIfAborted();
        const rows = await rowStatesAfter(db, collection, idType, after, o.pageSize);
        for (const r of rows) if (r.live && !seen.has(r.id)) missing.push(r.id);
        if (rows.length < o.pageSize) break;
        after = rows[rows.length - 1]!.id;
      }
    }
    if (opts.skipQueued) {
      const found = new Map(missing.map((id): [string, ScannedDrift] => [id, { id, force: false, kind: "missing", rowVersion: undefined, docVersion: undefined }]));
      const still = await settledDrift(found, recheck(found), queuedOf);
      missing.splice(0, missing.length, ...still.keys());
    }
    for (const id of missing) note("missing", id);
    report.drifted.missing += missing.length;
    report.driftedTotal += missing.length;
    if (opts.onDrift) pending.push(repair(missing));
    else if (missing.length > 0 && o.enqueue) {
      pending.push(insertJobs(db, missing.map((entityId) => ({ name: collection.jobName, entityId, priority: o.priority, tag: o.tag, delayMs: 0 }))).then((ids) => (report.enqueued += ids.length)));
    }
  }
  await Promise.all(pending);
  if (opts.index === undefined && opts.ids === undefined && opts.range === undefined) {
    const e = await embedDrift(db, collection, { enqueue: o.enqueue && !opts.onDrift, priority: o.priority, tag: o.tag, sampleSize: o.sampleSize });
    report.drifted.embedded += e.drifted;
    report.driftedTotal += e.drifted;
    report.samples.embedded.push(...e.samples);
    report.enqueued += e.enqueued;
  }
  report.durationMs = performance.now() - started;
  report.docsPerSecond = report.scanned / Math.max(0.001, report.durationMs / 1000);
  return report;
}
