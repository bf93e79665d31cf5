import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineSink } from "@tether/search-sink";
import { upcomingVersion } from "@tether/core/internal";
import { auditAnnotations, auditSummary, backupDatabase, call, otherBodies, restoreBackup, runConcurrent, scaled, type PostgresBackup, type TestContext } from "@tether/testkit";
import { annotationBody, annotations, countRows, createAnnotationContext } from "../scenarios/support/annotation-context.js";
import { spawnService, stopAll, type ServiceProcess } from "../scenarios/support/processes.js";
import { runTether, type CliRun } from "../support/tether-cli.js";

/**
 * Postgres goes back in time under a live index, as an operator meets it: annotations written
 * through the reference API and drained, a pg_dump, more writes drained, the dump restored over
 * the database (tether.version_seq winds back), and users redo their work through the API. The
 * versions handed out again collide with documents the engine still holds, often of the same
 * entity. Nothing may be confirmed against another body: after one `tether drain --until-empty`
 * every live row's document is the row's own (version and content), the alert says what
 * happened, and the runbook's commands, run literally, settle it.
 * Runs once per sink (test/suites.ts).
 */
const HANG_GUARD = { timeout: 1_800_000 };
const RUNBOOK = fileURLToPath(new URL("../../docs/alerts-and-runbook.md", import.meta.url));
const SECTION = "### After restoring Postgres, a point-in-time recovery or a failover";

/** The shell commands of the runbook section (its fenced block), one per line. */
function runbookCommands(): string[][] {
  const doc = readFileSync(RUNBOOK, "utf8");
  const start = doc.indexOf(SECTION);
  expect(start, `the runbook has a section "${SECTION}"`).toBeGreaterThanOrEqual(0);
  const block = /```(?:sh|bash)\n([\s\S]*?)```/.exec(doc.slice(start))![1]!;
  return block
    .split("\n")
    .map((l) => l.replace(/#.*$/, "").trim())
    .filter((l) => l.startsWith("tether "))
    .map((l) => l.split(/\s+/).slice(1).map((a) => a.replace("<collection>", annotations.name)));
}

describe("Postgres restored from a backup under a live index", HANG_GUARD, () => {
  const BEFORE = scaled(200, 40);
  const PATCHES = scaled(75, 15);
  const CREATES = scaled(30, 6);
  const DELETES = scaled(10, 3);
  /** Creates not made again after the restore: the sequence ends below what the engine holds. */
  const NOT_REDONE = scaled(10, 3);
  let ctx: TestContext<EngineSink>;
  let api: ServiceProcess | undefined;
  let backup: PostgresBackup | undefined;
  let env: Record<string, string>;
  const tether = async (args: string[]): Promise<CliRun> => runTether(args, env, 600_000);

  beforeAll(async () => {
    ctx = await createAnnotationContext({ sink: "per-project" });
    env = { DATABASE_URL: ctx.databaseUrl, ...ctx.serviceEnv(), TETHER_INDEX_PREFIX: ctx.indexPrefix };
  });
  afterAll(async () => {
    await stopAll([api]);
    backup?.remove();
    await ctx.close();
  });

  const startApi = async () => spawnService("api", { ...env, TETHER_GRACE_MS: "1000" }, { startTimeoutMs: 600_000 });
  const drained = async () => {
    const r = await tether(["drain", "--until-empty"]);
    expect(r.code, r.stderr).toBe(0);
    expect(await countRows(ctx.db, "SELECT count(*) AS n FROM tether.job")).toBe(0);
  };
  /** The writes made after the backup, and made again after the restore: edits, creates, deletes. */
  const afterBackup = async (ids: string[], round: string, creates: number) => {
    const patches = await runConcurrent(PATCHES, 8, (i) => call("PATCH", `${api!.url}/api/annotations/${ids[i]}`, { text: `edited after the backup (${round}) ${i}` }));
    const created = await runConcurrent(creates, 8, (i) => call("POST", `${api!.url}/api/annotations`, { ...annotationBody(1000 + i), text: `created after the backup (${round}) ${i}` }));
    const deletes = await runConcurrent(DELETES, 8, (i) => call("DELETE", `${api!.url}/api/annotations/${ids[PATCHES + i]}`));
    expect(patches.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    expect(created.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
    expect(deletes.map((r) => r.status).filter((s) => s !== 204 && s !== 200)).toEqual([]);
  };

  it("drains every write made again after the restore to its own body, says restore_detected, and the runbook's commands settle it", async () => {
    api = await startApi();
    const first = await runConcurrent(BEFORE, 8, (i) => call("POST", `${api!.url}/api/annotations`, annotationBody(i)));
    expect(first.every((r) => r.status === 201)).toBe(true);
    const ids = first.map((r) => String(r.body?.id));
    await drained();
    backup = await backupDatabase(ctx.databaseUrl);
    const seqAtBackup = await sequenceNext();

    await afterBackup(ids, "before the restore", CREATES);
    await drained();
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    const seqBeforeRestore = await sequenceNext();
    expect(seqBeforeRestore).toBeGreaterThan(seqAtBackup);

    // The disaster recovery: the API stops, the backup is restored, the API starts again.
    await stopAll([api]);
    api = undefined;
    await restoreBackup(ctx.databaseUrl, backup);
    expect(await sequenceNext()).toBe(seqAtBackup);
    api = await startApi();
    // Users redo their work: the same edits and deletes, and the creates but for the last few
    // (their ids come again from the restored identity; the others stay as documents of rows
    // Postgres no longer has).
    await afterBackup(ids, "after the restore", CREATES - NOT_REDONE);

    await drained();
    const audit = await auditAnnotations(ctx.db, ctx.sink);
    // Every row the restored Postgres holds reached search with its own body; what the restore
    // took from Postgres (creates not made again) is left for verify (ghosts: no job names them).
    expect({ lost: audit.lost.length, stale: audit.stale.length, jobs: audit.jobs, parked: audit.parked }).toEqual({ lost: 0, stale: 0, jobs: 0, parked: 0 });
    expect(await otherBodies(ctx.db, ctx.sink, annotations)).toEqual([]);
    // The drain's floor check found the engine ahead of the sequence: raised past it, and said.
    expect(await sequenceNext()).toBeGreaterThan(seqBeforeRestore);
    const alerts = await tether(["alerts", "--json"]);
    expect(alerts.code).toBe(1);
    const restore = (JSON.parse(alerts.stdout) as { alerts: { name: string; firing: boolean; message: string }[] }).alerts.find((a) => a.name === "restore_detected");
    expect(restore).toMatchObject({ firing: true, message: expect.stringContaining(annotations.name) });
    const status = await tether(["status"]);
    expect(status.stdout).toContain("either side went back in time");

    // The runbook's commands, literally: afterwards the index holds exactly the restored rows.
    for (const args of runbookCommands()) {
      const r = await tether(args);
      expect([0, 1], `tether ${args.join(" ")}: ${r.stderr}`).toContain(r.code);
    }
    expect(auditSummary(await auditAnnotations(ctx.db, ctx.sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    expect(await otherBodies(ctx.db, ctx.sink, annotations)).toEqual([]);
    const after = JSON.parse((await tether(["alerts", "--json"])).stdout) as { alerts: { name: string; firing: boolean }[] };
    expect(after.alerts.find((a) => a.name === "restore_detected")?.firing).toBe(false);
  });

  const sequenceNext = () => upcomingVersion(ctx.db);
});
