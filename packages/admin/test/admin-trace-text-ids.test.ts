import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations } from "@tether/annotations";
import { sql } from "kysely";
import { createWriter, defineCollection, migrate } from "@tether/core";
import { Drainer } from "@tether/core/internal";
import { asViewer, createAdminTestApp, type AdminTestApp } from "./support/admin-test-app.js";

/** A collection keyed by text the application chooses. */
const notes = defineCollection<{ id: string; body: string; version: string }>({
  name: "note",
  table: "note",
  index: "notes",
  toDocument: (r) => ({ body: r.body }),
  mappings: { properties: { body: { type: "text" } } },
});

describe("the entity trace with text ids", () => {
  let t: AdminTestApp;
  const ids = ["jane.doe@example.com", "2024/0001", "HD 7", "Zoë 東京", "..", `${"é".repeat(255)}ab`];

  beforeAll(async () => {
    t = await createAdminTestApp({ collections: [annotations, notes] });
    await migrate(t.db, [{ namespace: "notes", migrations: [{ id: 1, name: "note", sql: "CREATE TABLE note (id text PRIMARY KEY, body text NOT NULL, version bigint NOT NULL DEFAULT 1)" }] }]);
    await t.sink.ensureIndex(notes.index, notes.mappings);
    const writer = createWriter({ graceMs: 0 });
    for (const id of ids) await writer.createWithJob(t.db, notes, { id, body: `note ${id}` });
    await new Drainer({ db: t.db, sink: t.sink, collections: [notes] }).drainOnce();
  });
  afterAll(() => t.close());

  it("finds every synced text id through the query form, '..' and the 512-byte edge included, and through a percent-encoded path", async () => {
    // Versions come from one global sequence: each note has its own, read from its row.
    const rows = (await sql<{ id: string; version: string }>`SELECT id, version FROM note`.execute(t.db)).rows;
    const versions = new Map(rows.map((r) => [r.id, Number(r.version)]));
    for (const id of ids) {
      const version = versions.get(id);
      expect(version, id).toBeGreaterThan(0);
      const r = await t.app.inject({ method: "GET", url: `/admin/trace/note?${new URLSearchParams({ id }).toString()}`, headers: asViewer });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json(), id).toMatchObject({ id, verdict: "in_sync", postgres: { exists: true, version }, downstream: { exists: true, version, contentMatches: true } });
    }
    const path = await t.app.inject({ method: "GET", url: `/admin/trace/note/${encodeURIComponent("Zoë 東京")}`, headers: asViewer });
    expect(path.json()).toMatchObject({ id: "Zoë 東京", verdict: "in_sync" });
  });

  it("refuses an id outside the rule with a 400 naming it", async () => {
    const r = await t.app.inject({ method: "GET", url: `/admin/trace/note?${new URLSearchParams({ id: "é".repeat(257) }).toString()}`, headers: asViewer });
    expect(r.statusCode).toBe(400);
    expect(r.body).toMatch(/514 bytes of UTF-8; the engine's document _id holds at most 512/);
  });
});
