import { InvalidArgumentError, type Command } from "commander";
import { checkConfigSchema, jobTableExists, type Collection } from "@tether/core/internal";
import { openCliContext, type CliContext } from "./cli-context.js";
import { SchemaMissingError, UsageError } from "./cli-errors.js";

/** Options every verb accepts. */
export interface CommonOptions {
  json?: boolean;
  config?: string;
}

/** Adds `--json` and `--config <module>` to a verb. */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .option("--json", "print one JSON document on stdout instead of text")
    .option("--config <file>", "tether.config.ts to load (default: $TETHER_CONFIG, else ./tether.config.ts)");
}

/**
 * Runs `fn` with an open context and always closes it. Unless `tetherSchema` is false (migrate),
 * checks first that tether's schema exists, so a fresh database is told to migrate instead of
 * failing on a missing table somewhere deep in the verb; unless `checkSchema` is false (migrate,
 * adopt, capture), then checks the config's tables and columns against Postgres.
 */
export async function withContext<T>(
  opts: CommonOptions,
  fn: (ctx: CliContext) => Promise<T>,
  extra: { checkSchema?: boolean; tetherSchema?: boolean } = {},
): Promise<T> {
  const ctx = await openCliContext({ ...(opts.config ? { config: opts.config } : {}), checkSchema: false });
  try {
    if (extra.tetherSchema !== false && !(await jobTableExists(ctx.db))) throw new SchemaMissingError();
    if (extra.checkSchema !== false) await checkConfigSchema(ctx.db, ctx.config);
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

let written = false;

/** True once a verb has written its result (main then adds no JSON error document of its own). */
export function outputWritten(): boolean {
  return written;
}

/** Writes the verb's result: the JSON document with --json, else the human text. */
export function output(opts: CommonOptions, json: unknown, human: () => string): void {
  written = true;
  process.stdout.write(opts.json ? `${JSON.stringify(json, null, 2)}\n` : `${human()}\n`);
}

/** Commander argument parser for an integer option within bounds (a bad value exits 2). */
export function intOption(min: number, max: number) {
  return (raw: string): number => {
    const n = /^-?[0-9]+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be an integer in ${min}..${max}`);
    return n;
  };
}

/** Commander argument parser for a comma-separated list. */
export function listOption(raw: string, previous: string[] | undefined): string[] {
  const items = raw.split(",").map((s) => s.trim()).filter((s) => s.length > 0);
  if (items.length === 0) throw new InvalidArgumentError("must be a comma-separated list");
  return [...(previous ?? []), ...items];
}

/** The collection a verb acts on: `--collection <name>`, or the only one configured. */
export function pickCollection(ctx: CliContext, name: string | undefined): Collection<any> {
  if (name === undefined) {
    if (ctx.collections.length === 1) return ctx.collections[0]!;
    throw new UsageError(`several collections are configured (${ctx.collections.map((c) => c.name).join(", ")}): pass --collection`);
  }
  const c = ctx.collections.find((x) => x.name === name);
  if (!c) throw new UsageError(`unknown collection "${name}"; configured: ${ctx.collections.map((x) => x.name).join(", ")}`);
  return c;
}

/** Left-aligned text table. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n");
}
