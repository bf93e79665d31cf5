import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Drainer, entityKey, insertJobs, VerifyScheduler, type Sink } from "@tether/core/internal";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { drainToEmpty } from "../scenarios/support/drain.js";
import { idTypesContext, SCHEDULED_CASES } from "./support/id-types-context.js";

const ROWS = 30;

/**
 * The sink the scheduler reads through: the real one, except that `race` runs once right after
 * the run has read the entity as different (the fast run's realtime re-read of its candidates, the
 * deep run's scan of the window) and before the run reads the queue: a drain pass confirming
 * the entity's job in that moment, as a busy drainer does beside a scheduled run.
 */
function racingSink(sink: EngineSink, id: string, race: () => Promise<void>): Sink {
  const key = entityKey(id);
  let raced = false;
  const once = async () => {
    if (raced) return;
    raced = true;
    await race();
  };
  return new Proxy(sink, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === "fetchStates") {
        return async (index: string, ids: readonly string[], opts?: unknown) => {
          const states = await target.fetchStates(index, ids, opts as never);
          if (ids.includes(id)) await once();
          return states;
        };
      }
      if (prop === "scanDocuments") {
        return async function* (...args: Parameters<EngineSink["scanDocuments"]>) {
          yield* target.scanDocuments(...args);
          // The scan of the window holding the entity (a scheduled deep run reads one at a time).
          const range = args[1].range;
          if (!range || (range.from <= key && key < range.to)) await once();
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

// Runs once per sink (the vitest projects): fast and deep runs, integer ids (annotations) and uuid ids (gadgets).
describe.each(SCHEDULED_CASES)("a scheduled $mode verify of $collection.name beside a drain pass", ({ collection, mode }) => {
  let ctx: TestContext<EngineSink>;
  let drainer: Drainer;

  beforeAll(async () => {
    ctx = await idTypesContext([collection], ROWS);
    drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [collection] });
  });
  afterAll(() => ctx?.close());

  it("does not count as drift an entity whose queued job a drain pass confirms while the run compares it", async () => {
    const id = (await sql<{ id: string }>`SELECT id::text AS id FROM ${sql.table(collection.table)} ORDER BY id LIMIT 1`.execute(ctx.db)).rows[0]!.id;
    // Its document is gone and its job is due: the drain will write it back.
    await ctx.raw.delete(collection.index, id);
    await insertJobs(ctx.db, [{ name: collection.jobName, entityId: id, priority: 1, tag: "live", delayMs: 0 }]);
    let drainedWhileComparing = 0;
    const sink = racingSink(ctx.sink, id, async () => {
      for (const r of await drainToEmpty(drainer, ctx.db)) drainedWhileComparing += r.repaired;
    });

    const scheduler = new VerifyScheduler(ctx.db, sink, [collection], {
      fastIntervalMs: mode === "fast" ? 3_600_000 : 0,
      deepIntervalMs: mode === "deep" ? 3_600_000 : 0,
      bucketSize: 1_000,
      documentsPerSecond: 1_000_000,
      deepDocumentsPerSecond: 1_000_000,
    });
    const [result] = await scheduler.runDue();

    // The pass ran inside the comparison and repaired the document the run had read as missing…
    expect(drainedWhileComparing).toBe(1);
    expect((await ctx.sink.fetchStates(collection.index, [id])).has(id)).toBe(true);
    // …so the run found nothing: no drift counted, no repair job, no alert to raise.
    expect(result).toMatchObject({ collection: collection.name, mode, status: "done", driftedTotal: 0 });
    const repairs = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(ctx.db);
    expect(Number(repairs.rows[0]!.n)).toBe(0);
  });
});
