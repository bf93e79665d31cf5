import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { bumpDocuments, countReached, documentsBehindChanges, lostFanouts, requeueFanout } from "../store/embed-store.js";

/**
 * Anti-entropy of documents from several tables, from Postgres alone (the fan-out rule,
 * ../fan-out-rule.ts, says why these are the two ways such a change can be lost):
 * - a lost fan-out: a change of an embedded row still pending in tether.embed_change with no
 *   fan-out job left to expand it (deleted by hand, lost with a restore): its documents never got
 *   their bump. Repaired by enqueuing the fan-out again.
 * - a document behind an expanded change: a live document whose version is below a finished
 *   change of a row it reads (an expansion that skipped it), with no change of its own pending.
 *   Repaired by bumping it and enqueuing its sync job.
 * Both are drift of kind `embedded`: the buckets cannot see them, since the document and its
 * row still agree on a version the change never moved.
 */

export interface EmbedDriftReport {
  /** Documents the lost fan-outs reach, plus the documents behind an expanded change. */
  drifted: number;
  /** Lost fan-outs found (and re-enqueued when repairing). */
  lostFanouts: number;
  /** Up to `sampleSize` ids of documents behind an expanded change. */
  samples: string[];
  /** Jobs enqueued: fan-outs again, and the bumped documents' sync jobs. */
  enqueued: number;
}

export interface EmbedDriftOptions {
  enqueue: boolean;
  priority: number;
  tag: string;
  sampleSize: number;
  /** Documents behind an expanded change examined at most. Default 100000. */
  limit?: number;
}

/** Finds (and, with `enqueue`, repairs) what a lost fan-out left behind. Nothing to do for a collection without fan-out embeds. */
export async function embedDrift(db: Kysely<any>, collection: Collection<any>, opts: EmbedDriftOptions): Promise<EmbedDriftReport> {
  const report: EmbedDriftReport = { drifted: 0, lostFanouts: 0, samples: [], enqueued: 0 };
  if (collection.fanoutJobName === undefined) return report;
  for (const lost of await lostFanouts(db, collection)) {
    const embed = collection.embeds[lost.embed];
    if (!embed) continue;
    report.lostFanouts += 1;
    report.drifted += await countReached(db, collection, embed, lost.link);
    if (opts.enqueue) {
      await requeueFanout(db, collection, embed, lost.link, lost.version, opts.tag, opts.priority);
      report.enqueued += 1;
    }
  }
  const behind = await documentsBehindChanges(db, collection, opts.limit ?? 100_000);
  report.drifted += behind.length;
  report.samples = behind.slice(0, opts.sampleSize);
  if (opts.enqueue && behind.length > 0) report.enqueued += await bumpDocuments(db, collection, behind, { tag: opts.tag, priority: opts.priority });
  return report;
}
