import { sql } from "kysely";
import { isDeepStrictEqual } from "node:util";
import type { Collection } from "@tether/core";
import { loadShopProducts, shopProducts } from "../support/shop.js";
import { historyCollections, ID_KINDS, tableOf } from "./history-domain.js";
import { REFUSED_RANK, type HistoryModel } from "./history-model.js";
import { runTetherJson } from "./history-processes.js";
import { readRows } from "./history-rows.js";
import { proxiesSettled, type HistorySystem } from "./history-system.js";

/** What the invariant found: empty when both sides are equal and every tool says so. */
export interface InvariantReport {
  divergences: string[];
  /** Figures of the final drain and verify, for the run log. */
  figures: Record<string, unknown>;
}

interface VerifyJson {
  driftedTotal: number;
  collections: { collection: string; driftedTotal: number; samples: Record<string, string[]> }[];
  deep?: { collection: string; driftedTotal: number; orphans: number; samples: Record<string, string[]> }[];
}

/** Waits for what the history left running (drain passes end at their deadline; spawned verbs run to their end). */
async function settleBackground(sys: HistorySystem, divergences: string[]): Promise<void> {
  for (const task of sys.background.splice(0)) {
    try {
      const out = (await task.done) as { code?: number | null; stderr?: string } | undefined;
      // A verify or rebuild that failed while faults were on is an outcome, not a divergence; a crash is.
      if (out && typeof out === "object" && "code" in out && out.code !== 0 && /TypeError|ReferenceError|RangeError|at .*\.ts:\d+/.test(out.stderr ?? "")) {
        divergences.push(`${task.label} crashed: ${(out.stderr ?? "").slice(0, 800)}`);
      }
    } catch (err) {
      divergences.push(`${task.label} threw: ${String(err)}`);
    }
  }
}

/** What a document should be: a live row's version and the document built from it, or a deleted row's version. */
interface Expected {
  version: string;
  deleted: boolean;
  document: Record<string, unknown> | undefined;
}

/** The shop's products as `load` + `toDocument` build them from the rows. */
async function expectedProducts(sys: HistorySystem): Promise<Map<string, Expected>> {
  const rows = await sql<{ id: string; version: string; deleted: boolean }>`
    SELECT id::text AS id, version::text AS version, deleted_at IS NOT NULL AS deleted FROM shop_product`.execute(sys.db);
  const built = await loadShopProducts(sys.db, rows.rows.filter((r) => !r.deleted).map((r) => r.id));
  const documents = new Map(built.map((p) => [String(p.id), shopProducts.toDocument(p)]));
  return new Map(rows.rows.map((r) => [r.id, { version: r.version, deleted: r.deleted, document: documents.get(r.id) }]));
}

/**
 * Every live row's document equals the one built from it, at its version; every deleted row is a
 * tombstone or absent; no other document exists.
 */
async function compareDocuments(sys: HistorySystem, c: Collection<any>, label: string, rows: ReadonlyMap<string, Expected>): Promise<string[]> {
  const divergences: string[] = [];
  const docs = new Map<string, { deleted: boolean; version: number; tethered: boolean; source?: Record<string, unknown> }>();
  // The scan searches: recent writes must be made visible first (as verify --deep does).
  await sys.sink.refreshIndex?.(c.index);
  for await (const page of sys.sink.scanDocuments!(c.index, { pageSize: 500 })) for (const d of page) docs.set(d.id, d);
  for (const [id, row] of rows) {
    const doc = docs.get(id);
    const where = `${label} ${JSON.stringify(id)}`;
    if (row.deleted) {
      if (doc && !doc.deleted) divergences.push(`${where}: soft-deleted at v${row.version} but the engine holds a live document v${doc.version} ${JSON.stringify(doc.source)}`);
      continue;
    }
    if (!doc) divergences.push(`${where}: live at v${row.version} ${JSON.stringify(row.document)}, missing downstream`);
    else if (doc.deleted) divergences.push(`${where}: live at v${row.version}, a tombstone v${doc.version} downstream`);
    else if (doc.version !== Number(row.version) || !isDeepStrictEqual(doc.source, row.document)) {
      divergences.push(`${where}: row v${row.version} ${JSON.stringify(row.document)}, document v${doc.version} ${JSON.stringify(doc.source)}`);
    }
  }
  for (const [id, doc] of docs) {
    if (!doc.tethered) divergences.push(`${label} ${JSON.stringify(id)}: a document without tether's metadata (an orphan)`);
    else if (!rows.has(id) && !doc.deleted) divergences.push(`${label} ${JSON.stringify(id)}: no row, but a live document v${doc.version} ${JSON.stringify(doc.source)}`);
  }
  return divergences;
}

/**
 * After quiescence (faults off, everything left running ended, late bulks landed) and
 * `tether drain --until-empty`: every live row's document equals the one its collection builds
 * (the shop's products: what `load` + `toDocument` build from the rows of every table they read),
 * every deleted row is a tombstone or absent, no other document exists, no job is left, no change
 * of a related row is left unexpanded, nothing
 * is parked unless the history wrote a rank the mapping refuses, and `tether verify --deep`
 * (which runs the bucketed verify first for integer ids) reports no drift.
 */
export async function checkInvariant(sys: HistorySystem, model: HistoryModel): Promise<InvariantReport> {
  const divergences: string[] = [];
  await settleBackground(sys, divergences);
  await proxiesSettled(sys);
  // The operator's fix of a refused rank: the row is written again with a valid one.
  for (const kind of ID_KINDS) {
    for (const [id, row] of model.rowsOf(kind)) {
      if (row.rank !== REFUSED_RANK) continue;
      await sql`UPDATE ${sql.table(tableOf(kind))} SET rank = NULL WHERE id::text = ${id}`.execute(sys.db);
      model.put(kind, id, { ...row, rank: null });
    }
  }
  const drain = await runTetherJson<Record<string, unknown>>(sys, ["drain", "--until-empty", "--timeout", "600"]);
  const drainOk = drain.run.code === 0 || (model.refusalInjected && drain.run.code === 3);
  if (!drainOk) divergences.push(`tether drain --until-empty exited ${drain.run.code}: ${drain.run.stdout.slice(0, 600)} ${drain.run.stderr.slice(0, 600)}`);

  for (const kind of ID_KINDS) {
    const c = historyCollections[kind];
    const rows = await readRows(sys.db, kind);
    const expected = new Map([...rows].map(([id, row]) => [id, { version: row.version, deleted: row.deleted_at !== null, document: row.deleted_at === null ? c.toDocument(row) : undefined }]));
    divergences.push(...(await compareDocuments(sys, c, kind, expected)));
  }
  divergences.push(...(await compareDocuments(sys, shopProducts, "product", await expectedProducts(sys))));

  const left = await sql<{ jobs: string; parked: string }>`
    SELECT (SELECT count(*) FROM tether.job) AS jobs, (SELECT count(*) FROM tether.dead_job WHERE reason = 'parked') AS parked`.execute(sys.db);
  const { jobs, parked } = left.rows[0]!;
  if (Number(jobs) > 0) divergences.push(`${jobs} job(s) left after tether drain --until-empty`);
  const pending = await sql<{ embed: string; link: string }>`SELECT embed, link FROM tether.embed_change WHERE version > expanded`.execute(sys.db);
  if (pending.rows.length > 0) divergences.push(`changes of related rows never expanded after tether drain --until-empty: ${JSON.stringify(pending.rows)}`);
  if (Number(parked) > 0 && !model.refusalInjected) {
    const why = await sql<{ kwargs: unknown; last_error: string | null }>`SELECT kwargs, last_error FROM tether.dead_job WHERE reason = 'parked' LIMIT 5`.execute(sys.db);
    divergences.push(`${parked} job(s) parked though the history refused nothing: ${JSON.stringify(why.rows)}`);
  }

  const verify = await runTetherJson<VerifyJson>(sys, ["verify", "--deep", "--no-enqueue"]);
  if (verify.run.code !== 0 || !verify.json) divergences.push(`tether verify --deep exited ${verify.run.code}: ${verify.run.stderr.slice(0, 600)}`);
  else {
    for (const r of verify.json.collections) if (r.driftedTotal > 0) divergences.push(`tether verify: ${r.collection} drifted ${r.driftedTotal} ${JSON.stringify(r.samples)}`);
    for (const r of verify.json.deep ?? []) if (r.driftedTotal > 0 || r.orphans > 0) divergences.push(`tether verify --deep: ${r.collection} drifted ${r.driftedTotal}, orphans ${r.orphans} ${JSON.stringify(r.samples)}`);
  }
  return { divergences, figures: { drain: drain.json, verifyDrifted: verify.json?.driftedTotal } };
}
