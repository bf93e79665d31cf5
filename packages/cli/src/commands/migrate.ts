import type { Command } from "commander";
import { checkConfigSchema, checkVersionFloor, migrate, raiseVersionFloor, type ConfigWarning, type VersionFloorResult } from "@tether/core";
import { verifyKeyReadiness } from "@tether/core/internal";
import { CommandFailedError } from "../cli-errors.js";
import { output, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";
import { indexFailure, migrateIndexes, renderIndexReports } from "./migrate-indexes.js";
import { pendingAdoptionLines } from "./pending-adoption.js";
import { configWarningLines } from "./config-warnings.js";
import { verifyKeyLines } from "./verify-key-lines.js";

/** `tether migrate`: applies tether's schema and the configured application migrations. */
export function registerMigrate(program: Command): void {
  withCommonOptions(program.command("migrate").description("apply tether's and the application's database migrations (safe to run concurrently), and create each collection's index behind its alias with the declared mapping")).action(
    async (opts: CommonOptions) => {
      const result = await withContext(
        opts,
        async (ctx) => {
          const applied = await migrate(ctx.db, ctx.migrations);
          // The application's tables exist only now: check the config against them. A table
          // that only lacks what `tether adopt` adds is reported, not refused.
          const warnings: ConfigWarning[] = [];
          const needsAdoption = await checkConfigSchema(ctx.db, ctx.config, { pendingAdoption: "report", onWarning: (w) => warnings.push(w) });
          // Versions written before tether (or before its version sequence) stay below every
          // version handed out from now on: a re-inserted id can never land on an old one.
          const pending = new Set(needsAdoption.map((p) => p.collection));
          for (const c of ctx.collections) if (!pending.has(c.name)) await raiseVersionFloor(ctx.db, c);
          const indexes = await migrateIndexes(ctx);
          // The engine's versions too: after Postgres went back in time (a restore, a point-in-time
          // recovery, a failover), no version an index holds is handed out again.
          const versionFloor = await floorOf(ctx, ctx.collections.filter((c) => !pending.has(c.name)));
          // What the bucketed verify of uuid and text ids still needs (a rebuild, an index on the key).
          const verifyKeys = await verifyKeyReadiness(ctx.db, ctx.sink, ctx.collections.filter((c) => !pending.has(c.name)), { timeoutMs: 5_000, retries: 0 });
          // An index that could not be created or checked: the migration is not complete (exit 1).
          const error = indexFailure(indexes, "created or checked", "run `tether migrate` again");
          return { ...applied, needsAdoption, warnings, indexes, versionFloor, ...(verifyKeys.length > 0 ? { verifyKeys } : {}), ...(error ? { error } : {}) };
        },
        { checkSchema: false, tetherSchema: false },
      );
      output(opts, result, () =>
        [
          ...(result.applied.length === 0
            ? ["schema is up to date"]
            : [`applied ${result.applied.length} migration(s):`, ...result.applied.map((m) => `  ${m.namespace} ${String(m.id).padStart(6, "0")} ${m.name}`)]),
          ...pendingAdoptionLines(result.needsAdoption),
          ...configWarningLines(result.warnings),
          ...renderIndexReports(result.indexes),
          ...versionFloorLines(result.versionFloor),
          ...verifyKeyLines(result.verifyKeys ?? []),
        ].join("\n"),
      );
      if (result.error) throw new CommandFailedError(`the database is migrated, but ${result.error.message}`);
    },
  );
}

/** The version floor check of `migrate`; an engine that does not answer is said by the index report, not here. */
async function floorOf(ctx: Parameters<typeof checkVersionFloor>[0], collections: Parameters<typeof checkVersionFloor>[0]["collections"]): Promise<VersionFloorResult[]> {
  try {
    return await checkVersionFloor({ db: ctx.db, sink: ctx.sink, collections, call: { timeoutMs: 10_000, retries: 0 } });
  } catch {
    return [];
  }
}

/** A raised floor, said: the engine held versions the sequence would have handed out again. */
function versionFloorLines(results: readonly VersionFloorResult[]): string[] {
  return results
    .filter((r) => r.raised)
    .map(
      (r) =>
        `${r.collection}: the index holds v${r.engineHighest}, at or above tether.version_seq (next v${r.sequenceNext}): Postgres went back in time (a restore, a point-in-time recovery, a failover)? ` +
        `The sequence was raised past it; run \`tether drain --until-empty\` and \`tether verify ${r.collection}\` (docs/alerts-and-runbook.md#restore_detected)`,
    );
}
