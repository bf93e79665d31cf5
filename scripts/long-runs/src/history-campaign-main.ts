import { randomBytes, randomInt } from "node:crypto";
import { createDb, migrate } from "@tether/core";
import { createScratchDatabase, ensureElasticsearch, ensureOpenSearch, ensurePostgres } from "@tether/testkit";
import { describeFailure, runHistories, type HistoryFailure, type HistoryTimings } from "../../../test/history/history-runner.js";
import type { SinkName } from "../../../test/history/history-system.js";

export interface CampaignOptions {
  operations: number;
  /** First seed; history i runs with seed + i. Default: random (printed). */
  seed?: number;
  /** Replays one history (with --seed): fast-check's path printed with a divergence. */
  path?: string;
  /** With --path: which commands of the shrunk history ran (printed with a divergence). */
  replayPath?: string;
  sink: SinkName;
  maxCommands: number;
  wideIds: boolean;
  skipVersionCheck: boolean;
  log: (line: string) => void;
  /** Filled in as histories end, so an interrupted campaign can still report what it ran. */
  progress?: CampaignReport;
}

export interface CampaignReport {
  sink: SinkName;
  firstSeed: number;
  lastSeed: number;
  histories: number;
  operations: number;
  divergences: HistoryFailure[];
  durationMs: number;
  /** Seconds and runs per command class, the setup and the end check: where the time went. */
  timings: Record<string, { seconds: number; runs: number }>;
}

/** Operations a minute over the campaign's run. */
export const perMinute = (r: Pick<CampaignReport, "operations" | "durationMs">) => (r.durationMs > 0 ? Math.round((r.operations * 60_000) / r.durationMs) : 0);

/** The timings as a table, slowest first. */
export function formatTimings(t: CampaignReport["timings"]): string {
  return Object.entries(t)
    .sort((a, b) => b[1].seconds - a[1].seconds)
    .map(([what, { seconds, runs }]) => `  ${what.padEnd(22)} ${String(seconds).padStart(7)} s  ${String(runs).padStart(6)} runs  ${((seconds * 1000) / runs).toFixed(0).padStart(6)} ms each`)
    .join("\n");
}

/**
 * Runs random histories until `operations` commands ran, on a migrated template of its own
 * (dropped afterwards); after a divergence it records the minimal history and goes on with the
 * next seed, so one campaign reports every divergence it met.
 */
export async function runCampaign(o: CampaignOptions): Promise<CampaignReport> {
  const started = performance.now();
  const serverUrl = process.env.DATABASE_URL ?? (await ensurePostgres()).url;
  const engineUrl =
    o.sink === "opensearch" ? (process.env.OPENSEARCH_URL ?? (await ensureOpenSearch()).url) : (process.env.ELASTICSEARCH_URL ?? (await ensureElasticsearch()).url);
  const template = await createScratchDatabase(serverUrl, `tether_hist_tpl_${Date.now().toString(36)}${randomBytes(2).toString("hex")}`);
  const db = createDb({ connectionString: template.url, max: 1 });
  await migrate(db);
  await db.destroy();
  const firstSeed = o.seed ?? randomInt(1, 2 ** 31 - 1);
  const report: CampaignReport = o.progress ?? { sink: o.sink, firstSeed, lastSeed: firstSeed, histories: 0, operations: 0, divergences: [], durationMs: 0, timings: {} };
  Object.assign(report, { sink: o.sink, firstSeed, lastSeed: firstSeed });
  const timings: HistoryTimings = new Map();
  const summarize = () => {
    report.durationMs = Math.round(performance.now() - started);
    for (const [what, t] of timings) report.timings[what] = { seconds: Math.round(t.ms / 100) / 10, runs: t.runs };
  };
  // What the histories converged so far, before this runHistories call returns.
  let base = { histories: 0, operations: 0 };
  o.log(`history campaign on ${o.sink}: ${o.operations} operations from seed ${firstSeed}${o.wideIds ? ", wide text ids" : ""}`);
  try {
    let seed = firstSeed;
    while (report.operations < o.operations) {
      const r = await runHistories({
        targets: { serverUrl, template: template.name, sink: o.sink, engineUrl },
        seed,
        ...(o.path ? { path: o.path } : {}),
        ...(o.replayPath ? { replayPath: o.replayPath } : {}),
        operations: o.operations - report.operations,
        maxCommands: o.maxCommands,
        wideIds: o.wideIds,
        skipVersionCheck: o.skipVersionCheck,
        log: (line) => o.log(line),
        timings,
        onConverged: (done, operations) => {
          Object.assign(report, { histories: base.histories + done - seed + 1, operations: base.operations + operations, lastSeed: done });
          summarize();
        },
      });
      report.histories = base.histories + r.histories;
      report.operations = base.operations + r.operations;
      base = { histories: report.histories, operations: report.operations };
      if (!r.failure) {
        report.lastSeed = seed + r.histories - 1;
        break;
      }
      // The campaign's own replay: its options, its command limit, this history's seed and path.
      r.failure.replay = [
        `scripts/history-campaign --sink ${o.sink} --seed ${r.failure.seed} --path ${r.failure.path}`,
        r.failure.replayPath ? ` --replay-path ${r.failure.replayPath}` : "",
        ` --max-commands ${o.maxCommands} --operations 1${o.wideIds ? "" : " --narrow-ids"}${o.skipVersionCheck ? " --skip-version-check" : ""}`,
      ].join("");
      report.divergences.push(r.failure);
      o.log(describeFailure(r.failure));
      report.lastSeed = r.failure.seed;
      if (o.path) break;
      seed = r.failure.seed + 1;
    }
  } finally {
    await template.drop();
  }
  summarize();
  return report;
}

function parse(argv: string[]): Omit<CampaignOptions, "log"> & { json: boolean } {
  const opts = { operations: 100_000, sink: "elasticsearch" as SinkName, maxCommands: 200, wideIds: true, skipVersionCheck: false, json: false } as Omit<CampaignOptions, "log"> & { json: boolean };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--operations") opts.operations = Number(next());
    else if (a === "--seed") opts.seed = Number(next());
    else if (a === "--path") opts.path = next();
    else if (a === "--replay-path") opts.replayPath = next();
    else if (a === "--sink") opts.sink = next() === "opensearch" ? "opensearch" : "elasticsearch";
    else if (a === "--max-commands") opts.maxCommands = Number(next());
    else if (a === "--narrow-ids") opts.wideIds = false;
    else if (a === "--skip-version-check") opts.skipVersionCheck = true;
    else if (a === "--json") opts.json = true;
    else throw new Error(`unknown option ${a}`);
  }
  if (!(opts.operations > 0) || !(opts.maxCommands > 0) || (opts.seed !== undefined && !Number.isSafeInteger(opts.seed))) throw new Error("--operations, --max-commands and --seed take positive integers");
  return opts;
}

/** `scripts/history-campaign`: exit 0 when no history diverged, 1 when one did, 2 on bad usage. */
export async function historyCampaignMain(argv: string[]): Promise<number> {
  let opts: ReturnType<typeof parse>;
  try {
    opts = parse(argv);
  } catch (err) {
    process.stderr.write(`history-campaign: ${(err as Error).message}\n`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const progress: CampaignReport = { sink: opts.sink, firstSeed: 0, lastSeed: 0, histories: 0, operations: 0, divergences: [], durationMs: 0, timings: {} };
  const print = (report: CampaignReport, interrupted: boolean) => {
    const summary = `history campaign on ${report.sink}${interrupted ? " (interrupted; the histories that ended)" : ""}: seeds ${report.firstSeed}..${report.lastSeed}, ${report.histories} histories, ${report.operations} operations, ${report.divergences.length} divergence(s), ${Math.round(report.durationMs / 1000)} s (${perMinute(report)} operations a minute)\nwhere the time went:\n${formatTimings(report.timings)}`;
    process.stdout.write(opts.json ? `${JSON.stringify({ ...report, interrupted }, null, 2)}\n` : `${summary}\n${report.divergences.map(describeFailure).join("\n\n")}\n`);
  };
  // Ctrl-C (or a TERM) ends a long campaign with the report of what it ran; the history in flight
  // leaves its scratch database (tether_hist_*) and indices behind.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      print(progress, true);
      process.exit(progress.divergences.length === 0 ? 130 : 1);
    });
  }
  const report = await runCampaign({ ...opts, log, progress });
  print(report, false);
  return report.divergences.length === 0 ? 0 : 1;
}
