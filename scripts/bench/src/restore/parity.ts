import { sql, type Kysely } from "kysely";
import { contentHash } from "@tether/core";
import type { AnnotationRow } from "@tether/annotations";
import { plainAnnotations } from "../plain-annotations.js";
import type { BenchSink } from "../bench-engine.js";

/**
 * Whether every row with an id in [1, upTo] has its document at its version, holding the body
 * built from it (its content hash), and no job is left: parity for the rows a restore scenario
 * touched (the others were not written since the backup or the snapshot).
 */
export async function atParity(db: Kysely<any>, sink: BenchSink, upTo: number): Promise<boolean> {
  const jobs = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(db).catch(() => undefined);
  if (!jobs || Number(jobs.rows[0]!.n) > 0) return false;
  for (let from = 1; from <= upTo; from += 5_000) {
    const rows = (await db.selectFrom("annotation").selectAll().where("id", ">=", String(from)).where("id", "<", String(Math.min(upTo + 1, from + 5_000))).execute()) as AnnotationRow[];
    const states = await sink.fetchStates(plainAnnotations.index, rows.map((r) => String(r.id)));
    for (const row of rows) {
      const s = states.get(String(row.id));
      if (!s || s.deleted || s.version !== Number(row.version) || (s.content !== undefined && s.content !== contentHash(plainAnnotations.toDocument(row)))) return false;
    }
  }
  return true;
}

/** Polls `atParity` until it holds; resolves with the milliseconds since `since`. */
export async function untilParity(db: Kysely<any>, sink: BenchSink, upTo: number, since: number, guardMs = 1_800_000): Promise<number> {
  for (;;) {
    if (await atParity(db, sink, upTo)) return performance.now() - since;
    if (performance.now() - since > guardMs) throw new Error(`no parity ${guardMs} ms after the restore`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
