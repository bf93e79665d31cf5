import { createWriter } from "@tether/core";
import { annotations } from "@tether/annotations";
import type { BenchScope } from "../bench-scope.js";
import { runDrainChild, type DrainChildResult } from "../drain-child-process.js";
import { compare, type ResultRow } from "../report.js";
import { clearFanoutWork, jobCount, seedAuthor } from "./fanout-authors.js";

/** The base size of the memory comparison: large enough for the drainer's heap to reach its plateau. */
export function memoryBase(docs: number, large: number): number {
  return Math.min(100_000, Math.max(docs, Math.round(large / 2)));
}

/**
 * The drainer's peak RSS over a fan-out to `large` documents against one to `base` documents:
 * a rename, then a drainer child process (drainUntilEmpty: the expansion in chunks and the sync
 * passes) into an EchoSink, so that no engine bounds the pace and the memory is the drainer's.
 */
export async function drainerMemory(scope: BenchScope, base: number, large: number): Promise<{ rows: ResultRow[]; drains: DrainChildResult[] }> {
  const d = await scope.database("rss");
  const authors = { base: "acct:fanout-base@example.com", large: "acct:fanout-large@example.com" };
  await seedAuthor(d.db, authors.base, base);
  await seedAuthor(d.db, authors.large, large);
  const writer = createWriter({});
  const drain = async (size: "base" | "large"): Promise<DrainChildResult> => {
    await clearFanoutWork(d.db);
    await writer.updateWithJob(d.db, annotations.embeds.author, authors[size], { display_name: `Renamed ${Date.now()}` });
    const r = await runDrainChild({ databaseUrl: d.url, sinkKind: scope.env.sinkKind, elasticsearchUrl: scope.env.esUrl, indexPrefix: scope.indexPrefix, mode: "drain", collection: "authors", echo: true });
    const n = size === "base" ? base : large;
    const left = (await jobCount(d.db, annotations.jobName)) + (await jobCount(d.db, annotations.fanoutJobName!));
    if (!r.counts || r.counts.error || r.expanded !== n || left > 0) throw new Error(`the fan-out to ${n} expanded ${r.expanded} and left ${left} job(s): ${JSON.stringify(r.counts)}`);
    return r;
  };
  // One drain of each size: a peak over a whole drain is a maximum, not a sample to take the median of.
  const drains = { large: await drain("large"), base: await drain("base") };
  for (const [size, r] of Object.entries(drains)) scope.log(`drainer memory: fan-out to ${size === "base" ? base : large} drained in ${(r.durationMs / 1000).toFixed(1)} s, maxRSS ${(r.maxRssKb / 1024).toFixed(0)} MB`);
  const rows = [
    compare({
      bench: "fanout",
      metric: `drainer peak RSS, fan-out to ${large} vs ${base}`,
      unit: "MB",
      better: "lower",
      tether: [drains.large.maxRssKb / 1024],
      baselineName: `the same drain, fan-out to ${base}`,
      baseline: [drains.base.maxRssKb / 1024],
      note: "process.resourceUsage().maxRSS of a drainer child (the annotation collection with its author embed; batch 2500, concurrency 2, fan-out chunks of 10000) at exit, draining one rename's fan-out to an empty queue into an EchoSink (each written document reads back once, then is forgotten), once per size; V8's heap grows over the first ~40 passes (~100k documents) and stays flat after, so the base is never below 100k (or the large size's half)",
      goal: { op: "<=", value: 1.2 },
    }),
  ];
  return { rows, drains: [drains.large, drains.base] };
}
