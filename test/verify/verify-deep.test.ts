import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { contentHash, deepVerifyCollection, Drainer, enqueueReindex, verifyCollection } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import type { TestContext } from "@tether/testkit";
import { drainToEmpty } from "../scenarios/support/drain.js";
import { annotations, createAnnotationContext, insertRawAnnotations } from "../scenarios/support/annotation-context.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

// Runs once per sink (the vitest projects).
describe("verify --deep: content drift at the same version, and orphans", () => {
  let ctx: TestContext<EngineSink>;
  let ids: string[];
  let index: string;

  /** PUT a document as another writer would: at `version` (external_gte keeps the version), or with no version at all. */
  const put = async (id: string, body: Record<string, unknown>, version?: number) => {
    const q = version === undefined ? "?refresh=true" : `?refresh=true&version=${version}&version_type=external_gte`;
    const res = await fetch(`${ctx.downstreamUrl}/${index}/_doc/${encodeURIComponent(id)}${q}`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.text()).toBeLessThan(300);
  };
  const get = async (id: string) => (await (await fetch(`${ctx.downstreamUrl}/${index}/_doc/${encodeURIComponent(id)}`)).json()) as { found: boolean; _version: number; _source: Record<string, unknown> };
  const rowText = async (id: string) => (await sql<{ text: string }>`SELECT text FROM annotation WHERE id = ${id}`.execute(ctx.db)).rows[0]!.text;
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", ...args],
        { cwd: repoRoot, env: { ...process.env, DATABASE_URL: ctx.databaseUrl, ...ctx.serviceEnv(), TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" }, timeout: 90_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
    index = ctx.sink.indexName(annotations.index);
    ids = await insertRawAnnotations(ctx.db, 120);
    await enqueueReindex(ctx.db, annotations, { scope: "all" });
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);
  });
  afterAll(() => ctx.close());

  it("finds bodies edited behind tether's back at the same version, which the bucketed verify cannot, and repairs them; orphans are removed", async () => {
    // A buggy second writer: the body changes, the version and tether's metadata stay.
    const a = await get(ids[3]!);
    await put(ids[3]!, { ...a._source, text: "defaced" }, a._version);
    // A restore of an older body with its metadata rewritten to match: only the rebuilt document tells.
    const b = await get(ids[7]!);
    const { tether: metaB, ...bodyB } = b._source as { tether: Record<string, unknown> } & Record<string, unknown>;
    const restored = { ...bodyB, text: "restored from an old snapshot" };
    await put(ids[7]!, { ...restored, tether: { ...metaB, content: contentHash(restored) } }, b._version);
    expect((await get(ids[3]!))._version).toBe(a._version);
    // Something else's document in the same index, without tether's metadata.
    await put("foreign-1", { text: "not ours" });

    const fast = await verifyCollection(ctx.db, ctx.sink, annotations, { enqueue: false });
    expect(fast).toMatchObject({ driftedTotal: 0, orphans: 1 });

    const deep = await deepVerifyCollection(ctx.db, ctx.sink, annotations, { pageSize: 50 });
    expect(deep).toMatchObject({ scanned: 121, drifted: { content: 2, missing: 0, stale: 0, ghost: 0, deleted_live: 0, embedded: 0 }, orphans: 1, orphansRemoved: 1, enqueued: 2 });
    expect(deep.samples.content.sort()).toEqual([ids[3]!, ids[7]!].sort());
    expect(deep.samples.orphan).toEqual(["foreign-1"]);
    expect((await get("foreign-1")).found).toBe(false);

    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);
    for (const id of [ids[3]!, ids[7]!]) expect((await get(id))._source.text).toBe(await rowText(id));
    const again = await deepVerifyCollection(ctx.db, ctx.sink, annotations);
    expect(again).toMatchObject({ scanned: 120, driftedTotal: 0, orphans: 0, enqueued: 0 });
  });

  it("keeps orphans when told, limits itself to chosen ids, and reports as JSON through tether verify --deep", async () => {
    await put("foreign-2", { text: "kept" });
    const c = await get(ids[11]!);
    await put(ids[11]!, { ...c._source, text: "defaced again" }, c._version);

    const limited = await deepVerifyCollection(ctx.db, ctx.sink, annotations, { ids: [ids[11]!, ids[12]!], enqueue: false });
    expect(limited).toMatchObject({ scanned: 2, drifted: { content: 1 }, orphans: 0, enqueued: 0 });

    const r = await cli(["verify", "--deep", "--keep-orphans", "--no-enqueue", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { deep: { scanned: number; drifted: { content: number }; orphans: number; orphansRemoved: number; samples: { content: string[] } }[]; orphans: number };
    expect(report.deep[0]).toMatchObject({ scanned: 121, drifted: { content: 1 }, orphans: 1, orphansRemoved: 0, samples: { content: [ids[11]!] } });
    expect(report.orphans).toBe(1);
    expect((await get("foreign-2")).found).toBe(true);
  });

  it("does not split far-apart ids into more buckets than the data needs", async () => {
    // Two rows a trillion ids above the rest, and a ghost five trillion above them.
    await sql`INSERT INTO annotation (id, userid, target_uri, text) OVERRIDING SYSTEM VALUE VALUES (1000000000000, 'acct:far', 'https://example.com/far', 'far'), (1000000000005, 'acct:far', 'https://example.com/far', 'farther')`.execute(ctx.db);
    await enqueueReindex(ctx.db, annotations, { scope: "ids", ids: ["1000000000000", "1000000000005"] });
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);
    await ctx.sink.write(annotations.index, [{ kind: "index", id: "6000000000000", version: 1, document: { text: "ghost" } }]);
    const report = await verifyCollection(ctx.db, ctx.sink, annotations, { enqueue: false, bucketSize: 100 });
    expect(report.drifted).toEqual({ missing: 0, stale: 0, ghost: 1, deleted_live: 0, embedded: 0 });
    expect(report.samples.ghost).toEqual(["6000000000000"]);
    // Top level: the occupied buckets of 100 ids, one per gap, two open-ended ones; then the drill into the ghost's.
    expect(report.bucketsCompared, JSON.stringify(report)).toBeLessThan(20);
  });
});
