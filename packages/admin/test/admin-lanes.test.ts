import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { pausedNames } from "@tether/core/internal";
import { asOperator, asViewer, createAdminTestApp, type AdminTestApp } from "./support/admin-test-app.js";

describe("lanes in the admin API, resolved as `tether pause` resolves them", () => {
  let t: AdminTestApp;
  beforeAll(async () => {
    t = await createAdminTestApp();
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await sql`DELETE FROM tether.paused_name`.execute(t.db);
  });

  const act = (verb: "pause" | "resume", name: string, payload: object) => t.app.inject({ method: "POST", url: `/admin/lanes/${name}/${verb}`, headers: asOperator, payload });
  const lanes = async () => (await t.app.inject({ method: "GET", url: "/admin/lanes", headers: asViewer })).json().items as { name: string; collection: string | null; total: number; paused: { reason: string } | null }[];

  it("lists every configured lane even before its first job", async () => {
    expect(await t.jobCount()).toBe(0);
    // The sync lane, and the fan-out lane of the author embed's changes.
    const all = (await lanes()) as { name: string }[];
    expect(all.map((l) => l.name).sort()).toEqual(["fanout_annotation", "sync_annotation"]);
    for (const lane of all) expect(lane).toMatchObject({ collection: "annotation", total: 0, paused: null });
  });

  it("pauses a lane given by its collection name and answers with the job name it paused", async () => {
    const res = await act("pause", "annotation", { reason: "by collection" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ name: "sync_annotation", paused: true, changed: true });
    expect(await pausedNames(t.db)).toEqual(["sync_annotation"]);
    const resumed = await act("resume", "annotation", {});
    expect(resumed.json()).toEqual({ name: "sync_annotation", paused: false, changed: true });
    expect(await pausedNames(t.db)).toEqual([]);
  });

  it("refuses an unknown lane with 404 not_found naming it, pauses nothing, and audits the refusal", async () => {
    for (const verb of ["pause", "resume"] as const) {
      const res = await act(verb, "sync_anotation", { reason: "typo" });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: "not_found", message: expect.stringContaining('unknown lane "sync_anotation"') });
      expect(res.json().message).toContain("sync_annotation (annotation)");
    }
    expect(await pausedNames(t.db)).toEqual([]);
    const audit = await t.app.inject({ method: "GET", url: "/admin/audit?action=lane.pause&limit=1", headers: asViewer });
    expect(audit.json().items[0]).toMatchObject({ action: "lane.pause", status: 404, params: { name: "sync_anotation" }, result: { error: "not_found" } });
  });

  it("pauses a lane no collection handles only when forced, lists it, and resumes it the same way", async () => {
    expect((await act("pause", "sync_other_app", { reason: "before its first job", force: true })).json()).toEqual({ name: "sync_other_app", paused: true, changed: true });
    expect(await lanes()).toContainEqual(expect.objectContaining({ name: "sync_other_app", collection: null, total: 0, paused: expect.objectContaining({ reason: "before its first job" }) }));
    expect((await act("resume", "sync_other_app", {})).statusCode).toBe(404);
    expect((await act("resume", "sync_other_app", { force: true })).json()).toEqual({ name: "sync_other_app", paused: false, changed: true });
    expect(await pausedNames(t.db)).toEqual([]);
  });

  it("refuses a blank lane name or a force that is not a boolean with 400", async () => {
    const blank = await act("pause", "%20%20", { reason: "blank" });
    expect(blank.statusCode).toBe(400);
    expect(blank.json()).toMatchObject({ error: "validation", field: "name" });
    const badForce = await act("pause", "annotation", { reason: "x", force: "yes" });
    expect(badForce.statusCode).toBe(400);
    expect(badForce.json()).toMatchObject({ error: "validation", field: "force" });
    expect(await pausedNames(t.db)).toEqual([]);
  });
});
