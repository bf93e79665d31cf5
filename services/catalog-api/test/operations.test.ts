import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { enqueueReindex } from "@tether/core";
import { waitFor } from "@tether/testkit";
import { runCli } from "../../../packages/cli/test/support/run-cli.js";
import { spawnDrainer, type DrainerProcess } from "../../drainer/test/drainer-process.js";
import { products } from "../src/product-collection.js";
import { createCatalogContext, type CatalogContext } from "./support/catalog-context.js";

const config = ["--config", "services/catalog-api/catalog.config.ts"];

/**
 * The operator's tools on the catalog's config: uuid ids through status, drain, the dead-letter
 * table, the drainer daemon and re-index.
 */
describe("the CLI and the drainer daemon on catalog.config.ts, with uuid ids", () => {
  let ctx: CatalogContext;
  let drainer: DrainerProcess | undefined;
  const ids: string[] = [];
  const index = () => new URL(`/${ctx.indexPrefix}${products.index}`, ctx.elasticsearchUrl);

  beforeAll(async () => {
    ctx = await createCatalogContext();
    // Writes whose direct sync fails (a dead node): their jobs wait for the drainer.
    const offline = await ctx.build({ sink: ctx.sinkAt("http://127.0.0.1:1"), graceMs: 0 });
    const c = await ctx.call("POST", "/categories", { name: "Puerh" }, 201, offline);
    for (let i = 0; i < 3; i++) ids.push((await ctx.call("POST", "/products", { sku: `PU-${i}`, name: `Puerh ${i}`, priceCents: 900, categoryId: c.id, stock: i }, 201, offline)).id);
    ids.sort();
  });
  afterAll(async () => {
    drainer?.kill();
    await ctx.close();
  });

  it("counts the pending jobs with tether status (--config before or after the verb)", async () => {
    const before = await runCli(ctx, [...config, "status", "--json"]);
    expect(before.code, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({ total: 3, parked: 0 });
    const r = await runCli(ctx, ["status", "--json", ...config]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ total: 3, parked: 0 });
  });

  it("parks the jobs of documents the index refuses, and lists them with their uuids", async () => {
    // An index that refuses every field of the document: a permanent per-item failure.
    expect((await fetch(index(), { method: "DELETE" })).ok).toBe(true);
    const strict = await fetch(index(), { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ mappings: { dynamic: "strict", properties: { tether: { type: "object", dynamic: true } } } }) });
    expect(strict.ok, await strict.text()).toBe(true);

    const drained = await runCli(ctx, ["drain", "--once", "--max-attempts", "1", "--json", ...config]);
    expect(drained.code, drained.stderr).toBe(0);
    expect(JSON.parse(drained.stdout)).toMatchObject({ claimed: 3, parked: 3 });

    // --config before a nested verb reaches it too.
    const listed = await runCli(ctx, [...config, "parked", "list", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const dead = JSON.parse(listed.stdout) as { total: number; jobs: { kwargs: { id: string }; name: string; lastError: string }[] };
    expect(dead.total).toBe(3);
    expect(dead.jobs.map((j) => j.kwargs.id).sort()).toEqual(ids);
    expect(dead.jobs.every((j) => j.name === products.jobName && /strict_dynamic_mapping/.test(j.lastError))).toBe(true);
    const status = await runCli(ctx, ["status", "--json", ...config]);
    expect(JSON.parse(status.stdout)).toMatchObject({ total: 0, parked: 3 });
  });

  it("retries them once the index is fixed, and the drainer daemon on the catalog's config syncs them", async () => {
    expect((await fetch(index(), { method: "DELETE" })).ok).toBe(true);
    await ctx.sink.ensureIndex(products.index, products.mappings);
    const retried = await runCli(ctx, ["parked", "retry", "--all", "--json", ...config]);
    expect(retried.code, retried.stderr).toBe(0);
    expect(JSON.parse(retried.stdout)).toEqual({ retried: 3 });

    drainer = await spawnDrainer({ ...ctx.serviceEnv(), DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, TETHER_CONFIG: "services/catalog-api/catalog.config.ts", TETHER_DRAIN_INTERVAL_MS: "500" });
    await waitFor(async () => (await ctx.jobs()).length === 0, { what: "the daemon to drain the catalog's jobs", timeoutMs: 60_000 });
    for (const id of ids) expect(await ctx.document(id), id).toMatchObject({ category_name: "Puerh" });
    expect(new Set(await Promise.all(ids.map(async (id) => (await ctx.document(id))?.stock)))).toEqual(new Set([0, 1, 2]));
    drainer.child.kill("SIGTERM");
    expect(await drainer.exited).toBe(0);
    const status = await runCli(ctx, ["status", "--json", ...config]);
    expect(JSON.parse(status.stdout)).toMatchObject({ total: 0, parked: 0 });
  });

  it("re-indexes by category from the CLI, and refuses a category value that is not a uuid", async () => {
    const category = (await ctx.document(ids[0]!))!.category_id as string;
    const r = await runCli(ctx, ["reindex", "--scope", "category", "--value", category, "--json", ...config]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ enqueued: 3, priority: 100 });
    expect((await ctx.jobs()).map((j) => j.kwargs.id).sort()).toEqual(ids);
    await sql`DELETE FROM tether.job`.execute(ctx.db);
    await expect(enqueueReindex(ctx.db, products, { scope: "category", value: "puerh" })).rejects.toMatchObject({ code: "E_VALIDATION", field: "value" });
    const bad = await runCli(ctx, ["reindex", "--scope", "category", "--value", "puerh", "--json", ...config]);
    expect(bad.code, bad.stdout + bad.stderr).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: "usage", message: expect.stringMatching(/^value: not a value of column category_id/) } });
  });

  it("verifies the uuid-keyed collection in buckets of hashed ids (a product without a document) and with --deep (a body edited at the same version)", async () => {
    const doc = (id: string, q = "") => new URL(`/${ctx.indexPrefix}${products.index}/_doc/${id}${q}`, ctx.elasticsearchUrl);
    const edited = (await (await fetch(doc(ids[1]!))).json()) as { _version: number; _source: Record<string, unknown> };
    const put = await fetch(doc(ids[1]!, `?version=${edited._version}&version_type=external_gte&refresh=true`), {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...edited._source, name: "defaced" }),
    });
    expect(put.status).toBeLessThan(300);
    expect((await fetch(doc(ids[2]!, "?refresh=true"), { method: "DELETE" })).status).toBe(200);
    await sql`DELETE FROM tether.job`.execute(ctx.db);

    const fast = await runCli(ctx, ["verify", "--json", ...config]);
    expect(fast.code, fast.stderr).toBe(0);
    const bucketed = JSON.parse(fast.stdout) as { collections: { drifted: Record<string, number>; samples: Record<string, string[]>; enqueued: number }[]; deep?: unknown };
    expect(bucketed.deep).toBeUndefined();
    expect(bucketed.collections[0]).toMatchObject({ drifted: { missing: 1, stale: 0, ghost: 0, deleted_live: 0 }, samples: { missing: [ids[2]!] }, enqueued: 1 });
    await sql`DELETE FROM tether.job`.execute(ctx.db);

    const r = await runCli(ctx, ["verify", "--deep", "--json", ...config]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { collections: unknown[]; deep: { drifted: Record<string, number>; samples: Record<string, string[]>; enqueued: number }[]; driftedTotal: number };
    expect(report.collections).toHaveLength(1);
    expect(report.deep[0]).toMatchObject({ drifted: { content: 1, missing: 1, stale: 0, ghost: 0 }, samples: { content: [ids[1]!], missing: [ids[2]!] } });
    // The buckets' missing product and the content drift only the deep pass sees.
    expect(report.driftedTotal).toBe(2);
    expect([...new Set((await ctx.jobs()).map((j) => j.kwargs.id))].sort()).toEqual([ids[1]!, ids[2]!].sort());
  });
});
