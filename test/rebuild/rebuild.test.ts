import { spawn, execFile } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWriter, discardRebuild, Drainer, finishRebuild, rebuildIndex, rebuildStatus, rollbackRebuild, verifyCollection, type Collection, type RebuildProgress } from "@tether/core";
import { pausedNames } from "@tether/core/internal";
import type { AnnotationRow } from "@tether/annotations";
import type { EngineSink } from "@tether/search-sink";
import { startFaultProxy, waitFor, type TestContext } from "@tether/testkit";
import { annotations, createAnnotationContext, insertRawAnnotations } from "../scenarios/support/annotation-context.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** The annotation collection with a mapping change: `uri` becomes text with a keyword sub-field. */
const remapped: Collection<AnnotationRow> = {
  ...annotations,
  mappings: {
    properties: {
      ...(annotations.mappings!.properties as Record<string, unknown>),
      uri: { type: "text", fields: { raw: { type: "keyword" } } },
    },
  },
};

const HANG_GUARD = 900_000;

// Runs once per sink (the vitest projects).
describe("zero-downtime index rebuild", () => {
  let ctx: TestContext<EngineSink>;
  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
  });
  afterAll(() => ctx.close());

  const rows = async () =>
    new Map((await sql<{ id: string; version: string; live: boolean }>`SELECT id::text, version::text, deleted_at IS NULL AS live FROM annotation`.execute(ctx.db)).rows.map((r) => [r.id, r]));
  /** Every live row is in the index the alias serves at its version; no deleted row is live there (verify's notion of equal). */
  const expectAliasEqualsRows = async () => {
    const want = await rows();
    const got = await ctx.sink.fetchStates(annotations.index, [...want.keys()]);
    const wrong = [...want].filter(([id, r]) => {
      const doc = got.get(id);
      return r.live ? doc?.version !== Number(r.version) || doc.deleted : doc !== undefined && !doc.deleted;
    });
    expect(wrong.slice(0, 5)).toEqual([]);
    const report = await verifyCollection(ctx.db, ctx.sink, annotations, { enqueue: false });
    expect(report.driftedTotal).toBe(0);
  };
  const uriMapping = async (index: string) => {
    const r = await fetch(new URL(`/${ctx.indexPrefix}${index}/_mapping/field/uri`, ctx.elasticsearchUrl));
    return JSON.stringify(await r.json());
  };

  it("loads a new index while writes go on, proves it equal, swaps the alias, and keeps the old index until --finish; --rollback returns to it", async () => {
    await insertRawAnnotations(ctx.db, 3_000);
    const first = await rebuildIndex(ctx.db, ctx.sink, annotations, { batchSize: 500 });
    // Made by ensureIndex before any rebuild: the concrete index is kept under a new name.
    expect(first.previous).toBe(`${annotations.index}__initial`);
    await finishRebuild(ctx.db, ctx.sink, annotations);
    expect(await ctx.sink.indexLayout!(annotations.index)).toEqual({ kind: "alias", indices: [first.index] });
    // Processes starting later ensure the index by its name: an alias of it is that index existing.
    await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
    await expectAliasEqualsRows();

    // Live writes through the writer while the mapping change is rebuilt.
    const writer = createWriter({ sink: ctx.sink, directSyncTimeoutMs: 10_000 });
    const ids = [...(await rows()).keys()];
    let stop = false;
    let writes = 0;
    let writesWhenLoaded = -1;
    const written: string[] = [];
    const traffic = (async () => {
      for (let i = 0; !stop; i++) {
        const created = await writer.createWithJob(ctx.db, annotations, { userid: "acct:live@example.com", target_uri: `https://example.com/live/${i}`, text: `live ${i}` });
        written.push(String(created.row!.id));
        await writer.updateWithJob(ctx.db, annotations, ids[(i * 2) % ids.length]!, { text: `edited during the rebuild ${i}` });
        if (i % 5 === 0) await writer.deleteWithJob(ctx.db, annotations, ids[(i * 2 + 1) % ids.length]!);
        writes += 3;
      }
    })();
    traffic.catch(() => undefined);
    const phases = new Set<string>();
    const second = await rebuildIndex(ctx.db, ctx.sink, remapped, {
      batchSize: 200,
      concurrency: 2,
      onProgress: (p: RebuildProgress) => {
        phases.add(p.phase);
        if (p.phase === "catching_up" && writesWhenLoaded < 0) writesWhenLoaded = writes;
      },
    });
    stop = true;
    await traffic;
    // Writes went on while the rows were loaded, and after.
    expect(writesWhenLoaded).toBeGreaterThan(0);
    expect(writes).toBeGreaterThan(writesWhenLoaded);
    expect([...phases]).toEqual(["loading", "catching_up", "swapped"]);
    expect(second.previous).toBe(first.index);
    expect(await ctx.sink.indexLayout!(annotations.index)).toEqual({ kind: "alias", indices: [second.index] });
    expect(await uriMapping(second.index)).toContain('"raw"');
    expect(await uriMapping(first.index)).not.toContain('"raw"');
    // The lane was paused from the verify passes to the swap: the jobs of the writes made
    // meanwhile are due at once, and the drainer checks them against the new index.
    expect(await pausedNames(ctx.db)).toEqual([]);
    expect(second.jobsExpeditedAfterSwap).toBeGreaterThan(0);
    await new Drainer({ db: ctx.db, sink: ctx.sink, collections: [annotations] }).drainUntilEmpty();
    // Every write made during the rebuild is in the new index (created, edited, deleted).
    const created = await ctx.sink.fetchStates(annotations.index, written);
    expect(written.filter((id) => created.get(id)?.deleted !== false)).toEqual([]);
    await expectAliasEqualsRows();

    // After the swap the kept index misses what is written now; a rollback brings it up to date first.
    const after = await writer.createWithJob(ctx.db, annotations, { userid: "acct:late@example.com", target_uri: "https://example.com/late", text: "after the swap" });
    const rolled = await rollbackRebuild(ctx.db, ctx.sink, annotations);
    expect(rolled.repaired).toBeGreaterThanOrEqual(1);
    expect(await ctx.sink.indexLayout!(annotations.index)).toEqual({ kind: "alias", indices: [first.index] });
    expect((await ctx.sink.fetchStates(annotations.index, [String(after.row!.id)])).get(String(after.row!.id))).toMatchObject({ deleted: false });
    expect(await ctx.sink.indexLayout!(second.index)).toEqual({ kind: "missing" });
    expect(await rebuildStatus(ctx.db, annotations)).toBeUndefined();
    await expectAliasEqualsRows();
  });

  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", ...args], { cwd: repoRoot, env: cliEnv(), timeout: 120_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr }),
      );
    });
  const cliEnv = () => ({ ...process.env, DATABASE_URL: ctx.databaseUrl, ...ctx.serviceEnv(), TETHER_INDEX_PREFIX: ctx.indexPrefix, LOG_LEVEL: "warn" });

  /** Starts `tether rebuild` and SIGKILLs it once it has loaded some pages, but not all. */
  const killHalfWay = async () => {
    const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", "rebuild", "annotation", "--batch-size", "50", "--concurrency", "1"], {
      cwd: repoRoot,
      env: cliEnv(),
      stdio: "ignore",
    });
    const exited = once(child, "exit");
    const state = await waitFor(async () => {
      const s = await rebuildStatus(ctx.db, annotations);
      return s && s.rowsLoaded >= 500 ? s : undefined;
    }, { what: "the rebuild to load 500 rows", timeoutMs: 60_000, intervalMs: 10 });
    child.kill("SIGKILL");
    await exited;
    return state;
  };

  // 10,000 rows, two killed rebuilds and four CLI runs: about 35 s alone, several minutes beside
  // the other files of a matrix combination on a busy 2-core machine. A guard against a hang,
  // not a limit on the work.
  it("a rebuild SIGKILLed half-way leaves the alias untouched, refuses to start over, and resumes after its last page; another is discarded", async () => {
    // Rows a migration wrote behind tether's back: the rebuild loads them too.
    await insertRawAnnotations(ctx.db, 10_000);
    const before = await ctx.sink.indexLayout!(annotations.index);
    const killed = await killHalfWay();
    const s = (await rebuildStatus(ctx.db, annotations))!;
    expect(s.phase).toBe("loading");
    expect(s.rowsLoaded).toBeLessThan(s.rowsTotal);
    expect(await ctx.sink.indexLayout!(annotations.index)).toEqual(before);

    const again = await cli(["rebuild", "annotation"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/interrupted rebuild of annotation .* resume it or discard it/);

    const resumed = await cli(["rebuild", "annotation", "--resume", "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const r = JSON.parse(resumed.stdout).rebuilt as { index: string; resumed: boolean; rowsLoaded: number };
    expect(r).toMatchObject({ index: killed.target, resumed: true });
    // Only the pages after the last recorded one were loaded again.
    expect(r.rowsLoaded).toBeLessThanOrEqual(s.rowsTotal - s.rowsLoaded);
    expect(await ctx.sink.indexLayout!(annotations.index)).toEqual({ kind: "alias", indices: [killed.target] });
    await expectAliasEqualsRows();
    const finished = await cli(["rebuild", "annotation", "--finish"]);
    expect(finished.code, finished.stderr).toBe(0);

    const serving = await ctx.sink.indexLayout!(annotations.index);
    const discarded = await killHalfWay();
    const gone = await cli(["rebuild", "annotation", "--discard"]);
    expect(gone.code, gone.stderr).toBe(0);
    expect(await ctx.sink.indexLayout!(discarded.target)).toEqual({ kind: "missing" });
    expect(await ctx.sink.indexLayout!(annotations.index)).toEqual(serving);
    expect(await rebuildStatus(ctx.db, annotations)).toBeUndefined();
    const status = await cli(["rebuild", "annotation", "--status"]);
    expect(status.stdout).toContain("annotation: no rebuild");
  }, HANG_GUARD);

  it("ends equal through an engine that answers 200 while a tenth of the bulk items were never stored: the verify passes find and repair them", async () => {
    const proxy = await startFaultProxy({ target: ctx.downstreamUrl });
    try {
      await proxy.dropBulkItems(0.1, { forge: true });
      const r = await rebuildIndex(ctx.db, ctx.sinkAt(proxy.url), annotations, { batchSize: 500 });
      // The load believed every item written; the passes found what was not.
      expect(r.caughtUp).toBeGreaterThan(0);
      await proxy.setMode("pass");
      expect(await ctx.sink.indexLayout!(annotations.index)).toEqual({ kind: "alias", indices: [r.index] });
      await expectAliasEqualsRows();
      await finishRebuild(ctx.db, ctx.sink, annotations);
    } finally {
      await proxy.close();
    }
  });

  it("stops with the refused rows' ids when the new mapping does not fit them, and leaves the alias untouched", async () => {
    const before = await ctx.sink.indexLayout!(annotations.index);
    const misfit: Collection<AnnotationRow> = {
      ...annotations,
      mappings: { properties: { ...(annotations.mappings!.properties as Record<string, unknown>), user: { type: "long" } } },
    };
    await expect(rebuildIndex(ctx.db, ctx.sink, misfit)).rejects.toThrow(/refused \d+ row\(s\) of annotation, e\.g\. \d+: HTTP 400/);
    expect(await ctx.sink.indexLayout!(annotations.index)).toEqual(before);
    expect((await rebuildStatus(ctx.db, annotations))?.phase).toBe("loading");
    await discardRebuild(ctx.db, ctx.sink, annotations);
    expect(await rebuildStatus(ctx.db, annotations)).toBeUndefined();
  });
});
