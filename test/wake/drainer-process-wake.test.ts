import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueReindex } from "@tether/core";
import { waitFor, type TestContext } from "@tether/testkit";
import { annotations, createAnnotationContext, insertRawAnnotations } from "../scenarios/support/annotation-context.js";
import { spawnService, stopAll, type ServiceProcess } from "../scenarios/support/processes.js";

describe("the drainer process with its default settings", () => {
  let ctx: TestContext;
  let drainer: ServiceProcess | undefined;
  beforeAll(async () => {
    ctx = await createAnnotationContext();
  });
  afterAll(async () => {
    await stopAll([drainer]);
    await ctx.close();
  });

  it("listens for wake-ups and drains an admin re-index long before its 60 s interval", async () => {
    drainer = await spawnService("drainer", {
      DATABASE_URL: ctx.databaseUrl,
      ELASTICSEARCH_URL: ctx.elasticsearchUrl,
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      TETHER_DRAIN_INTERVAL_MS: "60000",
    });
    const d = drainer;
    await waitFor(() => d.logs.some((l) => l.includes('"listening for wake-ups"')), { what: "the LISTEN session" });
    const ids = await insertRawAnnotations(ctx.db, 20);
    await enqueueReindex(ctx.db, annotations, { scope: "ids", ids });
    await waitFor(async () => (await ctx.sink.fetchStates(annotations.index, ids)).size === ids.length, { what: "the re-indexed documents", timeoutMs: 50_000 });
    // Only a wake-up can start that pass: the interval (60 s ± 10 %) outlasts the wait above.
    await waitFor(() => d.logs.some((l) => l.includes('"drain pass"') && l.includes('"claimed":20')), { what: "the pass that drained them" });
  });

  it("runs without a LISTEN session when TETHER_LISTEN=false", async () => {
    const quiet = await spawnService("drainer", {
      DATABASE_URL: ctx.databaseUrl,
      ELASTICSEARCH_URL: ctx.elasticsearchUrl,
      TETHER_INDEX_PREFIX: ctx.indexPrefix,
      TETHER_LISTEN: "false",
    });
    try {
      const started = quiet.logs.find((l) => l.includes('"msg":"listening"'));
      expect(JSON.parse(started!)).toMatchObject({ listen: false });
      expect(quiet.logs.some((l) => l.includes('"listening for wake-ups"'))).toBe(false);
    } finally {
      await quiet.stop();
    }
    expect(quiet.logs.some((l) => l.includes('"listening for wake-ups"'))).toBe(false);
  });
});
