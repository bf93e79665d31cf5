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
];

export function formatChurn(r: ChurnReport): string {
  const first = r.samples[0];
  const last = r.samples.at(-1);
  const lines = [`churn: ${r.minutes} min at ${r.targetWritesPerSecond.toFixed(0)} writes/s (70% of the measured ${r.maxWritesPerSecond.toFixed(0)}/s unless --rate-fraction), autovacuum ${r.autovacuum}, ${r.samples.length} samples`];
  if (!first || !last) return `${lines[0]}\n  no complete sample: run for at least one --sample-seconds\n`;
  lines.push(`  figure                              first (${first.atSecond} s)   last (${last.atSecond} s)   last ÷ first   goal ≤ 1.2`);
  for (const f of FIGURES) {
    const a = first[f.key] as number | null;
    const b = last[f.key] as number | null;
    // Dead tuples of a queue table come and go with vacuum: a ratio on a handful is noise.
    const ratio = a && b !== null ? b / a : null;
    const verdict = ratio === null ? "n/a" : ratio <= 1.2 ? "met" : "missed";
    lines.push(`  ${f.label.padEnd(36)}${String(a === null ? "n/a" : Math.round(a * 10) / 10).padEnd(16)}${String(b === null ? "n/a" : Math.round(b * 10) / 10).padEnd(14)}${ratio === null ? "n/a".padEnd(15) : `${ratio.toFixed(2)}×`.padEnd(15)}${verdict}`);
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
