import { execFile } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, type CollectionPurgeResult } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { createTestContext, withoutContent, type TestContext } from "@tether/testkit";
import { startDrainerDaemon } from "../../services/drainer/src/index.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

describe("the tombstone retention purge", () => {
  let ctx: TestContext;

  const tombstones = (ids: string[], version = 3) => ctx.sink.write(annotations.index, ids.map((id) => ({ kind: "tombstone" as const, id, version })));
  const states = async (ids: string[]) => Object.fromEntries(withoutContent(await ctx.sink.fetchStates(annotations.index, ids)));
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ["--conditions=source", "--import", "tsx", "packages/cli/src/main.ts", ...args],
        { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix }, timeout: 90_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
  });
  afterAll(() => ctx.close());

  it("tether purge-tombstones counts in a dry run, keeps young tombstones, and removes those past --older-than", async () => {
    await tombstones(["101", "102"]);
    await ctx.sink.write(annotations.index, [{ kind: "index", id: "103", version: 1, document: { text: "live" } }]);

    const young = await cli(["purge-tombstones", "--json"]);
    expect(young.code, young.stderr).toBe(0);
    expect(JSON.parse(young.stdout)).toEqual({ dryRun: false, results: [{ collection: annotations.name, found: 0, purged: 0, skipped: 0 }] });

    const dry = await cli(["purge-tombstones", "--older-than", "0s", "--dry-run", "--json"]);
    expect(JSON.parse(dry.stdout)).toEqual({ dryRun: true, results: [{ collection: annotations.name, found: 2, purged: 0, skipped: 0 }] });
    expect(Object.keys(await states(["101", "102"]))).toHaveLength(2);

    const purged = await cli(["purge-tombstones", "--older-than", "0s"]);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toMatch(new RegExp(`${annotations.name}\\s+2\\s+0`));
    expect(await states(["101", "102", "103"])).toEqual({ "103": { version: 1, deleted: false } });

    const bad = await cli(["purge-tombstones", "--older-than", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--older-than.*expected a duration such as 30d/);
  });

  it("the drainer daemon's maintenance leader purges tombstones past the configured retention", async () => {
    await tombstones(["201", "202"]);
    const daemon = await startDrainerDaemon({
      db: ctx.db,
      sink: ctx.sink,
      collections: [annotations],
      port: 0,
      logger: pino({ level: "silent" }),
      drainer: { intervalMs: 60_000 },
      maintenance: { intervalMs: 60_000 },
      tombstones: { retentionMs: 0, purgeIntervalMs: 1 },
    });
    try {
      const purged = once(daemon.events, "tombstonePurge") as Promise<[CollectionPurgeResult[]]>;
      const m = await daemon.maintainNow();
      expect(m.leader).toBe(true);
      const [results] = await purged;
      expect(results).toEqual([{ collection: annotations.name, found: 2, purged: 2, skipped: 0 }]);
      expect(await states(["201", "202"])).toEqual({});
    } finally {
      await daemon.stop();
    }
  });
});
