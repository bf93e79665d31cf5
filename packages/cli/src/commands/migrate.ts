import type { Command } from "commander";
import { checkConfigSchema, migrate, raiseVersionFloor } from "@tether/core";
import { CommandFailedError } from "../cli-errors.js";
import { output, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";
import { migrateIndexes, renderIndexReports, unreachableIndexes } from "./migrate-indexes.js";
import { pendingAdoptionLines } from "./pending-adoption.js";

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
          const needsAdoption = await checkConfigSchema(ctx.db, ctx.config, { pendingAdoption: "report" });
          // Versions written before tether (or before its version sequence) stay below every
          // version handed out from now on: a re-inserted id can never land on an old one.
          const pending = new Set(needsAdoption.map((p) => p.collection));
          for (const c of ctx.collections) if (!pending.has(c.name)) await raiseVersionFloor(ctx.db, c);
          return { ...applied, needsAdoption, indexes: await migrateIndexes(ctx) };
        },
        { checkSchema: false, tetherSchema: false },
      );
      output(opts, result, () =>
        [
          ...(result.applied.length === 0
            ? ["schema is up to date"]
            : [`applied ${result.applied.length} migration(s):`, ...result.applied.map((m) => `  ${m.namespace} ${String(m.id).padStart(6, "0")} ${m.name}`)]),
          ...pendingAdoptionLines(result.needsAdoption),
          ...renderIndexReports(result.indexes),
        ].join("\n"),
      );
      const unreachable = unreachableIndexes(result.indexes);
      if (unreachable.length > 0) throw new CommandFailedError(`the database is migrated, but ${unreachable.length} index(es) could not be created or checked (${unreachable.map((r) => r.error).join("; ")}): run \`tether migrate\` again once the engine answers`);
    },
  );
}
