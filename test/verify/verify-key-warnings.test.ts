import { execFile } from "node:child_process";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, Drainer, migrate, rebuildIndex, verifyKeyReadiness, type Collection } from "@tether/core/internal";
import type { EngineSink } from "@tether/search-sink";
import { waitFor, type TestContext } from "@tether/testkit";
import { startDrainerDaemon, type DrainerDaemon } from "../../services/drainer/src/index.js";
import { drainToEmpty } from "../scenarios/support/drain.js";
import { createGadgetContext, gadgets } from "../support/gadgets.js";
import { ticketMigrations, tickets } from "../support/tickets.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const config = fileURLToPath(new URL("./fixtures/verify-keys.config.ts", import.meta.url));

// Runs once per sink (the vitest projects).
describe("what the bucketed verify of uuid and text ids still needs, said at start-up and by tether status", () => {
  let ctx: TestContext<EngineSink>;
  let daemon: DrainerDaemon | undefined;
  const collections: Collection<any>[] = [gadgets, tickets];

  const status = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", "status", "--config", config, ...args],
        { cwd: repoRoot, env: { ...process.env, DATABASE_URL: ctx.databaseUrl, ...ctx.serviceEnv(), TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" }, timeout: 90_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    // The gadget table has an index on tether.entity_key(id::text); the ticket table has none.
    ctx = await createGadgetContext();
    await migrate(ctx.db, [ticketMigrations]);
    await ctx.sink.ensureIndex(tickets.index, tickets.mappings);
    const writer = createWriter({ graceMs: 0 });
    for (let i = 0; i < 20; i++) {
      await writer.createWithJob(ctx.db, gadgets, { name: `gadget ${i}` });
      await writer.createWithJob(ctx.db, tickets, { id: `case-${i}`, subject: `subject ${i}`, tags: [] });
    }
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections }), ctx.db);
    // One gadget document as written before ids other than integers had a bucket key.
    const [id] = (await ctx.db.selectFrom("gadget").select(ctx.db.fn<string>("text", ["id"]).as("id")).limit(1).execute()).map((r) => r.id);
    const doc = await ctx.raw.get(gadgets.index, id!);
    const { key: _key, ...meta } = (doc.source as { tether: Record<string, unknown> }).tether;
    await ctx.raw.index(gadgets.index, id!, { ...doc.source, tether: meta });
    await ctx.sink.refreshIndex(gadgets.index);
  });
  afterAll(async () => {
    await daemon?.stop();
    await ctx.close();
  });

  it("names each collection and what to run: tether rebuild for documents without the key, CREATE INDEX for a table without the key's index", async () => {
    const warnings = await verifyKeyReadiness(ctx.db, ctx.sink, collections);
    expect(warnings).toEqual([
      expect.objectContaining({ collection: "gadget", kind: "unkeyed_documents", unkeyed: 1, fix: "tether rebuild gadget", message: expect.stringContaining("`tether rebuild gadget`") }),
      expect.objectContaining({ collection: "ticket", kind: "no_key_index", fix: "CREATE INDEX ON ticket (tether.entity_key(id::text));" }),
    ]);

    const text = await status([]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("verify needs:");
    expect(text.stdout).toContain("gadget: 1 document(s) in its index predate the bucket key of uuid ids");
    expect(text.stdout).toContain("until `tether rebuild gadget` writes them again");
    expect(text.stdout).toContain("ticket: no index on tether.entity_key(id::text)");
    const json = await status(["--json"]);
    expect((JSON.parse(json.stdout) as { verifyKeys: { collection: string; kind: string }[] }).verifyKeys.map((w) => [w.collection, w.kind])).toEqual([
      ["gadget", "unkeyed_documents"],
      ["ticket", "no_key_index"],
    ]);

    // The drainer daemon says the same once at start-up, in its log.
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString("utf8").split("\n")) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    daemon = await startDrainerDaemon({
      db: ctx.db,
      sink: ctx.sink,
      collections,
      logger: pino({ level: "warn" }, sink),
      port: 0,
      host: "127.0.0.1",
      verify: { fastIntervalMs: 0, deepIntervalMs: 0 },
    });
    const said = await waitFor(() => (lines.filter((l) => l.fix !== undefined).length >= 2 ? lines.filter((l) => l.fix !== undefined) : undefined), { what: "the start-up warnings" });
    expect(said).toEqual([
      expect.objectContaining({ level: 40, collection: "gadget", kind: "unkeyed_documents", fix: "tether rebuild gadget", msg: expect.stringContaining("tether rebuild gadget") }),
      expect.objectContaining({ level: 40, collection: "ticket", kind: "no_key_index", msg: expect.stringContaining("CREATE INDEX ON ticket") }),
    ]);
    await daemon.stop();
    daemon = undefined;

    // Once rebuilt, the gadget's warning is gone.
    await rebuildIndex(ctx.db, ctx.sink, gadgets);
    expect((await verifyKeyReadiness(ctx.db, ctx.sink, collections)).map((w) => [w.collection, w.kind])).toEqual([["ticket", "no_key_index"]]);
  });
});
