import { createWriter, Drainer, migrate, type Collection } from "@tether/core/internal";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { drainToEmpty } from "../../scenarios/support/drain.js";
import { annotations, createAnnotationContext } from "../../scenarios/support/annotation-context.js";
import { gadgetMigrations, gadgets } from "../../support/gadgets.js";

/**
 * A context of this project's sink with both id types a scheduled verify serves: annotations
 * (integer ids) and gadgets (uuid ids). `rows` entities of each of `collections` are written
 * through the writer and drained, so their documents start equal to their rows.
 */
export async function idTypesContext(collections: readonly Collection<any>[], rows: number): Promise<TestContext<EngineSink>> {
  const ctx = await createAnnotationContext({ sink: "per-project" });
  await migrate(ctx.db, [gadgetMigrations]);
  await ctx.sink.ensureIndex(gadgets.index, gadgets.mappings);
  const writer = createWriter({ graceMs: 0 });
  for (let i = 0; i < rows; i++) {
    if (collections.includes(annotations)) await writer.createWithJob(ctx.db, annotations, { userid: `acct:u${i % 3}@example.com`, target_uri: `https://example.com/${i}`, text: `note ${i}` });
    if (collections.includes(gadgets)) await writer.createWithJob(ctx.db, gadgets, { name: `gadget ${i}` });
  }
  await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [...collections] }), ctx.db);
  return ctx;
}

/** Every scheduled mode over both id types: the cases a scheduled-verify test runs (per sink: the vitest projects). */
export const SCHEDULED_CASES: readonly { collection: Collection<any>; mode: "fast" | "deep" }[] = [
  { collection: annotations, mode: "fast" },
  { collection: annotations, mode: "deep" },
  { collection: gadgets, mode: "fast" },
  { collection: gadgets, mode: "deep" },
];
