import { parseArgs } from "node:util";

/** Sizes of every benchmark; `--scale` multiplies the counts, `--full` switches the 1M pieces to 1M. */
export interface Sizes {
  /** Jobs enqueued and drained per repetition of the queue comparison. */
  queueJobs: number;
  /** Annotation documents re-indexed (bench 2). */
  reindexDocs: number;
  /** Annotation documents verified when already current (bench 3). */
  verifyDocs: number;
  /** Rows of `pnpm bench restore` (10% of them written after the backup or snapshot). */
  restoreDocs: number;
  /** Rows of the zero-downtime rebuild (`--full`: 1M). */
  rebuildDocs: number;
  /** Sequential requests per variant and repetition of the write path (bench 4). */
  writeSamples: number;
  /** Rows enqueued by the admin re-index (bench 5). */
  enqueueRows: number;
  /** Due jobs in the claim benchmark (bench 6). */
  claimDue: number;
  /** Expired / parked / future jobs added next to them (bench 6). */
  claimExtra: number;
  /** Claims measured per scenario (bench 6). */
  claimSamples: number;
  /** Jobs accumulated during the outage (bench 7). */
  backlogJobs: number;
  /** Sequential POSTs per repetition with Elasticsearch healthy / hanging (bench 8). */
  apiSamples: number;
  apiHangSamples: number;
  /** Single-row statements per variant and repetition of the capture trigger benchmark. */
  captureSamples: number;
  /** Rows of the bulk UPDATE … WHERE with and without the capture trigger. */
  captureBulkRows: number;
  /** Rows of the table adopted under live writes (`--full`: 1M). */
  adoptRows: number;
  /** Seconds of each autocannon run of the load benchmark (`--full`: 15). */
  loadSeconds: number;
  /** Documents one author's rename fans out to (`--full`: 100k), against an author of 10. */
  fanoutDocs: number;
  /** The large fan-out whose drainer's peak RSS is compared with a fan-out to 100k (or half its size, if less) (`--full`: 1M). */
  fanoutLargeDocs: number;
  /** Items of the smaller verify-scale collections; the larger are 10× (`--full`: 1M, so 1M and 10M). */
  verifyScaleDocs: number;
  /** Jobs of each drain of verify-scale's drain-under-verify figure (`--full`: 100k). */
  verifyScaleDrainJobs: number;
  /** Repetitions of each measurement. */
  reps: number;
}

export const DEFAULT_SIZES: Sizes = {
  queueJobs: 20_000,
  reindexDocs: 100_000,
  verifyDocs: 100_000,
  restoreDocs: 100_000,
  rebuildDocs: 100_000,
  writeSamples: 300,
  enqueueRows: 200_000,
  claimDue: 10_000,
  claimExtra: 200_000,
  claimSamples: 30,
  backlogJobs: 100_000,
  apiSamples: 300,
  apiHangSamples: 20,
  captureSamples: 500,
  captureBulkRows: 100_000,
  adoptRows: 200_000,
  loadSeconds: 10,
  fanoutDocs: 10_000,
  fanoutLargeDocs: 200_000,
  verifyScaleDocs: 100_000,
  verifyScaleDrainJobs: 20_000,
  reps: 3,
};

const FULL_OVERRIDES: Partial<Sizes> = { reindexDocs: 1_000_000, rebuildDocs: 1_000_000, enqueueRows: 1_000_000, claimExtra: 1_000_000, backlogJobs: 1_000_000, adoptRows: 1_000_000, loadSeconds: 15, fanoutDocs: 100_000, fanoutLargeDocs: 1_000_000, verifyScaleDocs: 1_000_000, verifyScaleDrainJobs: 100_000 };

export interface CliOptions {
  only: string[];
  sizes: Sizes;
  scale: number;
  full: boolean;
  outDir: string;
  list: boolean;
  /** The engine the sink benchmarks measure (`--sink`, default elasticsearch). */
  sink: "elasticsearch" | "opensearch";
  /** `--against <git ref>`: run the same benchmarks on a worktree of that ref too, paired per repetition. */
  against?: string;
}

const USAGE = `Usage: pnpm bench [name ...] [--only name[,name]] [--sink elasticsearch|opensearch] [--scale f] [--full] [--reps n] [--against ref] [--out dir] [--list]
  --sink s    the engine of reindex, verify and backlog: elasticsearch (default) or opensearch
  --scale f   multiply every count by f (default 1; e.g. 0.1 for a smoke run)
  --full      the 1M sizes: re-index, admin enqueue, claim table contents, backlog, adopt, fan-out 100k and 1M,
              verify-scale 1M and 10M (slow)
  --reps n    repetitions per measurement (default 3)
  --against r the same benchmarks on a worktree of git ref r (under .cache/bench-against/) too, in the same
              run: n repetitions of one process each, ours then r's, and each figure's ratio to r's; a
              figure more than 10% worse than r's is flagged
  --out dir   where the JSON report goes (default bench-results)`;

export function parseCli(argv: readonly string[]): CliOptions {
  const { values, positionals } = parseArgs({
    args: argv.filter((a) => a !== "--"),
    allowPositionals: true,
    options: {
      only: { type: "string", multiple: true },
      scale: { type: "string" },
      full: { type: "boolean", default: false },
      reps: { type: "string" },
      out: { type: "string" },
      list: { type: "boolean", default: false },
      sink: { type: "string", default: "elasticsearch" },
      against: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const scale = values.scale === undefined ? 1 : Number(values.scale);
  if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${values.scale}`);
  const base: Sizes = { ...DEFAULT_SIZES, ...(values.full ? FULL_OVERRIDES : {}) };
  const sizes = { ...base };
  for (const k of Object.keys(sizes) as (keyof Sizes)[]) {
    if (k === "reps" || k === "loadSeconds" || k === "claimSamples" || k === "apiHangSamples" || k === "captureSamples") continue;
    sizes[k] = Math.max(k === "claimDue" ? 2500 : 100, Math.round(base[k] * scale));
  }
  if (values.reps !== undefined) {
    const reps = Number(values.reps);
    if (!Number.isInteger(reps) || reps < 1) throw new Error(`--reps must be a positive integer, got ${values.reps}`);
    sizes.reps = reps;
  }
  const sink = values.sink ?? "elasticsearch";
  if (sink !== "elasticsearch" && sink !== "opensearch") throw new Error(`--sink must be elasticsearch or opensearch, got ${sink}`);
  const only = [...positionals, ...(values.only ?? []).flatMap((x) => x.split(","))].map((x) => x.trim()).filter(Boolean);
  if (values.against !== undefined && values.against.trim() === "") throw new Error("--against needs a git ref");
  return { only, sizes, scale, full: values.full ?? false, outDir: values.out ?? "bench-results", list: values.list ?? false, sink, ...(values.against ? { against: values.against.trim() } : {}) };
}
