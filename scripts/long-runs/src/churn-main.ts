import { ensureElasticsearch, startPrivatePostgres } from "@tether/testkit";
import { runChurn, type ChurnReport, type ChurnSample } from "./churn-run.js";

const USAGE = "usage: scripts/churn [--minutes 30] [--rate-fraction 0.7] [--probe-seconds 20] [--sample-seconds 60] [--json]\n";

/** The figures compared, first sample against last; goal: each ≤ 1.2× its first value. */
const FIGURES: { key: keyof ChurnSample; label: string }[] = [
  { key: "claimP99Ms", label: "claim p99 (ms)" },
  { key: "createWithJobP99Ms", label: "createWithJob p99 (ms)" },
  { key: "postP99Ms", label: "POST p99 incl. direct sync (ms)" },
  { key: "jobHeapBytes", label: "tether.job heap (bytes)" },
  { key: "jobIndexBytes", label: "tether.job indexes (bytes)" },
  { key: "jobDeadTuples", label: "tether.job dead tuples" },
  { key: "jobDeadTuplesPeak", label: "tether.job dead tuples, peak" },
];

const shown = (x: number | null | undefined) => String(x === null || x === undefined ? "n/a" : Math.round(x * 10) / 10);
const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b !== null && b !== undefined ? b / a : null);

/**
 * First sample against the last (the goal), and the middle one against the last: the first
 * minute may still be filling the table (jobs wait out the direct sync's grace period before a
 * drainer takes them, and autovacuum comes once a minute), so growth from the middle on is what
 * tells decay from warm-up.
 */
export function formatChurn(r: ChurnReport): string {
  const first = r.samples[0];
  const mid = r.samples[Math.floor((r.samples.length - 1) / 2)];
  const last = r.samples.at(-1);
  const lines = [`churn: ${r.minutes} min at ${r.targetWritesPerSecond.toFixed(0)} writes/s (${Math.round((100 * r.targetWritesPerSecond) / r.maxWritesPerSecond)}% of the measured ${r.maxWritesPerSecond.toFixed(0)}/s), autovacuum ${r.autovacuum}, ${r.samples.length} samples`];
  if (!first || !mid || !last) return `${lines[0]}\n  no complete sample: run for at least one --sample-seconds\n`;
  lines.push(`  ${"figure".padEnd(36)}${`first (${first.atSecond} s)`.padEnd(16)}${`mid (${mid.atSecond} s)`.padEnd(16)}${`last (${last.atSecond} s)`.padEnd(16)}${"last ÷ first".padEnd(14)}${"goal ≤ 1.2".padEnd(12)}last ÷ mid`);
  for (const f of FIGURES) {
    const [a, m, b] = [first, mid, last].map((s) => s[f.key] as number | null | undefined);
    const x = ratio(a, b);
    const verdict = x === null ? "n/a" : x <= 1.2 ? "met" : "missed";
    const y = ratio(m, b);
    lines.push(`  ${f.label.padEnd(36)}${shown(a).padEnd(16)}${shown(m).padEnd(16)}${shown(b).padEnd(16)}${(x === null ? "n/a" : `${x.toFixed(2)}×`).padEnd(14)}${verdict.padEnd(12)}${y === null ? "n/a" : `${y.toFixed(2)}×`}`);
  }
  return lines.join("\n") + "\n";
}

/**
 * Command line of `scripts/churn`. Runs on a Postgres server of its own (the machine's
 * binaries, default settings: autovacuum on), never on DATABASE_URL's, whose settings are
 * whatever its owner chose; Elasticsearch from ELASTICSEARCH_URL (else provisioned).
 */
export async function churnMain(argv: readonly string[]): Promise<number> {
  const arg = (name: string, fallback: string) => {
    const i = argv.indexOf(name);
    return Number(i >= 0 ? argv[i + 1] : fallback);
  };
  const minutes = arg("--minutes", "30");
  const rateFraction = arg("--rate-fraction", "0.7");
  const probeSeconds = arg("--probe-seconds", "20");
  const sampleSeconds = arg("--sample-seconds", "60");
  if (!(minutes > 0) || !(rateFraction > 0 && rateFraction <= 1) || !(probeSeconds > 0) || !(sampleSeconds > 0)) {
    process.stderr.write(USAGE);
    return 2;
  }
  const elasticsearchUrl = process.env.ELASTICSEARCH_URL ?? (await ensureElasticsearch()).url;
  const server = await startPrivatePostgres();
  let report: ChurnReport;
  try {
    report = await runChurn({ databaseUrl: server.url, elasticsearchUrl, minutes, rateFraction, probeSeconds, sampleSeconds });
  } finally {
    await server.close();
  }
  process.stdout.write(argv.includes("--json") ? `${JSON.stringify(report, null, 2)}\n` : formatChurn(report));
  return 0;
}
