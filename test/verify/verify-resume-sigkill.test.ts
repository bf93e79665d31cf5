import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Drainer, enqueueReindex, migrate, type Collection } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { createTestContext, waitFor, type TestContext } from "@tether/testkit";
import type { EngineSink } from "@tether/search-sink";
import { spawnDrainer, type DrainerProcess } from "../../services/drainer/test/drainer-process.js";
import { drainToEmpty } from "../scenarios/support/drain.js";
import { gadgetMigrations, gadgets } from "../support/gadgets.js";

const ROWS = 3_000;
/** Rows per window: one bucket of 100 ids (integer ids); hashed keys (uuid) spread ~100 per bucket, unevenly. */
const WINDOW_ROWS = { annotation: 100, gadget: 200 };
const config = new URL("./fixtures/verify-resume.config.ts", import.meta.url).pathname;

// Runs once per sink (the vitest projects): fast and deep runs, integer ids (annotations) and uuid ids (gadgets).
describe.each([
  { collection: annotations as Collection<any>, mode: "fast" },
  { collection: annotations as Collection<any>, mode: "deep" },
  { collection: gadgets as Collection<any>, mode: "fast" },
  { collection: gadgets as Collection<any>, mode: "deep" },
])("a scheduled $mode verify of $collection.name whose leader is SIGKILLed mid-run", ({ collection, mode }) => {
  let ctx: TestContext<EngineSink>;
  const procs: DrainerProcess[] = [];
  const spawn = async () => {
    const p = await spawnDrainer({
      DATABASE_URL: ctx.databaseUrl,
      ...ctx.serviceEnv(),
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      TETHER_CONFIG: config,
      TETHER_MAINTENANCE_INTERVAL_MS: "200",
      VERIFY_RESUME_MODE: mode,
      VERIFY_RESUME_COLLECTION: collection.name,
      LOG_LEVEL: "debug",
    });
    procs.push(p);
    return p;
  };
  const run = async () =>
    (await sql<{ mode: string; status: string; documents_compared: string; resumes: number; drifted_total: number }>`
      SELECT mode, status, documents_compared::text, resumes, drifted_total FROM tether.verify_run WHERE started_by = 'scheduler'`.execute(ctx.db)).rows;

  beforeAll(async () => {
    ctx = await createTestContext({ sink: "per-project" });
    await migrate(ctx.db, [annotationMigrations, gadgetMigrations]);
    await ctx.sink.ensureIndex(collection.index, collection.mappings);
    if (collection === annotations) {
      await sql`INSERT INTO annotation (userid, target_uri, text) SELECT 'acct:v', 'https://example.com/' || g, 'text ' || g FROM generate_series(1, ${ROWS}) g`.execute(ctx.db);
    } else {
      await sql`INSERT INTO gadget (name) SELECT 'gadget ' || g FROM generate_series(1, ${ROWS}) g`.execute(ctx.db);
    }
    await enqueueReindex(ctx.db, collection, { scope: "all" });
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [collection] }), ctx.db);
  });
  afterAll(async () => {
    for (const p of procs) p.kill();
    await ctx?.close();
  });

  it("is resumed from its checkpoint by the next leader: only the window in hand is compared twice", async () => {
    const first = await spawn();
    // Signal: the run's checkpoint row shows a third of the collection compared.
    await waitFor(async () => Number((await run())[0]?.documents_compared ?? 0) >= ROWS / 3, { what: "a third of the run checkpointed", timeoutMs: 60_000 });
    first.child.kill("SIGKILL");
    await first.exited;
    const [atKill] = await run();
    expect(atKill).toMatchObject({ mode, status: "running", resumes: 0 });
    const checkpointed = Number(atKill!.documents_compared);
    expect(checkpointed).toBeLessThan(ROWS);
    // What the killed process compared: its last window line (logged before that window's checkpoint).
    const windows = first.logs.filter((l) => l.msg === "verify window").map((l) => Number(l.documentsThisProcess));
    const comparedByFirst = Math.max(...windows);

    const second = await spawn();
    const resumed = await second.waitForLog((l) => l.msg === "verify run resumed from its checkpoint", 60_000);
    expect(resumed).toMatchObject({ mode, documentsCompared: checkpointed, resumes: 1 });
    const completed = await second.waitForLog((l) => l.msg === "verify run completed", 120_000);
    const comparedBySecond = Number(completed.documentsThisProcess);
    expect(await run()).toEqual([{ mode, status: "done", documents_compared: String(ROWS), resumes: 1, drifted_total: 0 }]);

    // It did not start over: the second compared only what the checkpoint had not, and what both
    // compared beyond the collection (documents compared twice) is at most the window the first
    // was in when killed; starting over would compare the checkpointed third again.
    expect(comparedBySecond).toBe(ROWS - checkpointed);
    const comparedTwice = comparedByFirst + comparedBySecond - ROWS;
    expect(comparedTwice).toBeGreaterThanOrEqual(0);
    expect(comparedTwice).toBeLessThanOrEqual(WINDOW_ROWS[collection.name as keyof typeof WINDOW_ROWS]);
    expect(comparedTwice).toBeLessThan(checkpointed);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });
});
