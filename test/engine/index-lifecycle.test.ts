import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createWriter, Drainer } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, startFaultProxy, type FaultProxy, type TestContext } from "@tether/testkit";
import { drainToEmpty } from "../scenarios/support/drain.js";
import { annotations } from "../scenarios/support/annotation-context.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

// Runs once per sink (the vitest projects). `tether migrate` owns the index; writes never create one.
describe("Tether owns the index: migrate creates it behind its alias, writes never let the engine create one", () => {
  let ctx: TestContext<EngineSink>;
  const proxies: FaultProxy[] = [];
  const alias = () => ctx.sink.indexName(annotations.index);
  const engine = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(new URL(path, ctx.downstreamUrl), { method, headers: { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, json: (method === "HEAD" ? {} : await res.json()) as Record<string, any> };
  };
  const cli = (args: string[], url = ctx.downstreamUrl): Promise<RunResult> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", ...args],
        { cwd: repoRoot, env: { ...process.env, DATABASE_URL: ctx.databaseUrl, ...ctx.serviceEnv(url), TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" } },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr }),
      );
    });
  const writeAnnotation = (tags: string[]) =>
    createWriter({ sink: ctx.sink, directSyncTimeoutMs: 30_000, graceMs: 0 }).createWithJob(ctx.db, annotations, { userid: "acct:ann@example.com", target_uri: "https://example.com/a", text: "hello", tags });

  beforeEach(async () => {
    ctx = await createTestContext({ sink: "per-project" });
  });
  afterEach(async () => {
    for (const p of proxies.splice(0)) await p.close();
    await ctx.close();
  });
  afterAll(async () => {
    for (const p of proxies.splice(0)) await p.close();
  });

  it("after `tether migrate`, the writer writing first and the drainer after leave the declared mapping: keyword stays keyword and a terms aggregation works", async () => {
    const migrated = await cli(["migrate", "--json"]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(JSON.parse(migrated.stdout).indexes).toEqual([{ collection: "annotation", index: annotations.index, state: "created", layout: "alias", problems: [] }]);

    // The README's order: the handler's writer first (its direct sync is the first write), then the drainer.
    for (let i = 0; i < 5; i++) expect((await writeAnnotation([`t${i % 2}`, "all"])).sync).toBe("ok");
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);

    const mapping = await engine("GET", `/${alias()}/_mapping`);
    const [concrete] = Object.keys(mapping.json);
    expect(concrete).toMatch(new RegExp(`^${alias()}__`));
    expect(mapping.json[concrete!].mappings.properties).toMatchObject({ tags: { type: "keyword" }, user: { type: "keyword" }, text: { type: "text" } });
    await engine("POST", `/${alias()}/_refresh`);
    const agg = await engine("POST", `/${alias()}/_search`, { size: 0, aggs: { tags: { terms: { field: "tags" } } } });
    expect(agg.status).toBe(200);
    expect(agg.json.aggregations.tags.buckets).toEqual(expect.arrayContaining([{ key: "all", doc_count: 5 }, { key: "t0", doc_count: 3 }, { key: "t1", doc_count: 2 }]));

    // A second migrate finds it ready; status says so too.
    expect(JSON.parse((await cli(["migrate", "--json"])).stdout).indexes[0]).toMatchObject({ state: "ready", layout: "alias" });
    const status = await cli(["status", "--json"]);
    expect(JSON.parse(status.stdout).indexes[0]).toMatchObject({ collection: "annotation", state: "ready" });
  });

  it("keeps the job of a write to a missing index as retryable, saying to run `tether migrate`, creates no index, and syncs it once migrate ran", async () => {
    const migrated = await cli(["migrate", "--json"]);
    expect(migrated.code, migrated.stderr).toBe(0);
    // Someone removes the index (and its alias) after migrate: writes must not bring it back with guessed mappings.
    const layout = await ctx.sink.indexLayout!(annotations.index);
    expect(layout.kind).toBe("alias");
    for (const i of (layout as { indices: string[] }).indices) await ctx.sink.deleteIndex!(i);

    const { sync, changes } = await writeAnnotation(["x"]);
    expect(sync).toBe("error");
    const drained = await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }).drainOnce();
    expect(drained).toMatchObject({ claimed: 1, retried: 1, parked: 0 });
    expect((await engine("HEAD", `/${alias()}`)).status).toBe(404);
    const job = (await sql<{ last_error: string }>`SELECT last_error FROM tether.job WHERE kwargs->>'id' = ${changes[0]!.id}`.execute(ctx.db)).rows;
    expect(job[0]!.last_error).toMatch(/does not exist: run `tether migrate`/);

    expect((await cli(["migrate", "--json"])).code).toBe(0);
    await sql`UPDATE tether.job SET scheduled_at = now()`.execute(ctx.db);
    await drainToEmpty(new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }), ctx.db);
    expect((await ctx.sink.fetchStates(annotations.index, [changes[0]!.id])).get(changes[0]!.id)).toMatchObject({ version: 1, deleted: false });
  });

  it("reports an index whose mapping contradicts the declared one in migrate, status and the drainer's start-up log, with `tether rebuild` as the fix", async () => {
    expect((await cli(["migrate", "--json"])).code).toBe(0);
    const layout = (await ctx.sink.indexLayout!(annotations.index)) as { indices: string[] };
    for (const i of layout.indices) await ctx.sink.deleteIndex!(i);
    // An index the engine made with guessed mappings (what a write used to cause): tags became text.
    await engine("PUT", `/${alias()}/_doc/1`, { tags: ["a"], user: "acct:x" });

    const migrated = await cli(["migrate"]);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/annotation \(index annotations\): mapping differs from the declared one: .*tags is text, declared keyword.*; run `tether rebuild annotation`/);
    const json = JSON.parse((await cli(["migrate", "--json"])).stdout).indexes[0];
    expect(json).toMatchObject({ state: "mapping_differs", layout: "index", fix: "run `tether rebuild annotation`" });
    expect(json.problems).toEqual(expect.arrayContaining([{ field: "tags", declared: "keyword", actual: "text" }, { field: "created", declared: "date", actual: null }]));
    expect(JSON.parse((await cli(["status", "--json"])).stdout).indexes[0]).toMatchObject({ state: "mapping_differs" });
    const drain = await cli(["drain", "--once", "--json"]);
    expect(drain.code, drain.stderr).toBe(0);
    expect(drain.stderr).toMatch(/mapping differs from the declared one.*run `tether rebuild annotation`/);
  });

  it("bounds the drain's start-up check against a hanging engine by --deadline-ms and by --timeout, naming the bound", async () => {
    expect((await cli(["migrate", "--json"])).code).toBe(0);
    const proxy = await startFaultProxy({ target: ctx.downstreamUrl });
    proxies.push(proxy);
    await proxy.setMode({ kind: "hang" });
    const once = await cli(["drain", "--once", "--deadline-ms", "4000", "--json"], proxy.url);
    expect(once.code).toBe(1);
    expect(JSON.parse(once.stdout).error.message).toMatch(/did not answer the start-up index check within the drain's bound \(--deadline-ms 4000, 4000 ms\)/);
    const until = await cli(["drain", "--until-empty", "--timeout", "3", "--json"], proxy.url);
    expect(until.code).toBe(1);
    expect(JSON.parse(until.stdout).error.message).toMatch(/within the drain's bound \(--timeout 3, 3000 ms\)/);
  });
});
