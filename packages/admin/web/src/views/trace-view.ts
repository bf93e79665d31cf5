import { api } from "../api.js";
import { confirmAction } from "../confirm-dialog.js";
import { append, h, num, table, when } from "../dom.js";
import { actionButton, badge, clip, fanoutProgress, field, section, select, viaText, type View } from "../ui.js";
import type { Trace } from "../types.js";

const GOOD = new Set(["in_sync", "deleted_in_sync", "absent"]);

export const traceView: View = async (main, ctx) => {
  const collectionName = ctx.params.get("collection") ?? ctx.collections[0]?.name ?? "";
  const id = ctx.params.get("id") ?? "";
  const collection = select("collection", ctx.collections.map((c) => [c.name, c.name]), collectionName);
  const input = h("input", { name: "id", value: id, placeholder: "entity id", "aria-label": "entity id", "data-testid": "trace-id", required: true });
  const form = h("form", { class: "filters search", role: "search" }, field("Collection", collection), field("Id", input), h("button", { type: "submit", class: "primary", "data-testid": "trace-submit" }, "Trace"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `#/trace?${new URLSearchParams({ collection: collection.value, id: input.value }).toString()}`;
  });
  main.append(section("Entity trace", h("p", { class: "muted" }, "Why is this entity (not) in Elasticsearch? Both sides, its jobs, and what happened to it."), form));
  if (!id) return;
  // The id as a query parameter: any id the rule allows, spaces at its ends, "." and ".." included.
  const t = await api<Trace>("GET", `trace/${encodeURIComponent(collectionName)}?${new URLSearchParams({ id }).toString()}`);
  const pg = t.postgres;
  const ds = t.downstream;
  append(main, [
    h("div", { class: `card verdict ${GOOD.has(t.verdict) ? "good" : "bad"}`, "data-testid": "trace-verdict", "data-verdict": t.verdict },
      h("h2", {}, `${t.collection} ${t.id}: ${t.verdict.replace(/_/g, " ")}`),
      h("p", { "data-testid": "trace-explanation" }, t.explanation),
      // The trace says what repairs its verdict (content drift needs a forced rewrite).
      t.repair === null ? null : actionButton(ctx, t.repair.force ? "Re-index this entity (forced)…" : "Re-index this entity…", async () => {
        const repair = t.repair!;
        if (!(await confirmAction({ title: `Re-index ${t.collection} ${t.id}?`, body: repair.note, confirm: "Enqueue" }))) return;
        const r = await api<{ enqueued: number }>("POST", "reindex", { collection: t.collection, scope: "ids", ids: [t.id], priority: 1, force: repair.force });
        ctx.notify(`${r.enqueued} job enqueued`);
        ctx.refresh();
      }, { "data-testid": "trace-reindex" }),
    ),
    h("div", { class: "two-col" },
      section("Postgres",
        h("dl", {}, h("dt", {}, "row"), h("dd", {}, pg.exists ? (pg.deleted ? badge("deleted", "warn") : badge("live", "ok")) : badge("no row", "muted")),
          h("dt", {}, "version"), h("dd", {}, num(pg.version))),
        pg.row ? table(["column", "value"], Object.entries(pg.row).map(([k, v]) => [k, clip(typeof v === "string" ? v : JSON.stringify(v), { max: 300 })]), { testid: "trace-row" }) : null,
      ),
      section("Elasticsearch",
        h("dl", {},
          h("dt", {}, "document"), h("dd", {}, !ds.reachable ? badge("unreachable", "bad") : ds.exists ? (ds.deleted ? badge("tombstone", "warn") : badge("present", "ok")) : badge("absent", t.verdict === "missing" ? "bad" : "muted")),
          h("dt", {}, "version"), h("dd", {}, num(ds.version)),
          h("dt", {}, "content matches the row"), h("dd", {}, ds.contentMatches === null ? "–" : ds.contentMatches ? badge("yes", "ok") : badge("no", "bad")),
          ds.error ? h("dt", {}, "error") : null, ds.error ? h("dd", {}, clip(ds.error, { className: "error-text" })) : null,
        ),
      ),
    ),
    section("Pending jobs", table(["id", "tag", "priority", "state", "attempts", "last error", "scheduled", "enqueued by"],
      t.pendingJobs.map((j) => [j.id, j.tag, num(j.priority), j.state, num(j.attempts), clip(j.lastError, { className: "error-text" }), when(j.scheduledAt), viaText(j.via)]),
      { testid: "trace-jobs", empty: "No job pending." })),
    t.fanout.pendingChanges.length || t.fanout.fanouts.length ? section("Changes of tables it reads, still to reach it",
      table(["table", "row", "embed", "changed", "fan-out job"],
        t.fanout.pendingChanges.map((c) => [c.table, `${c.column} = ${c.value}`, c.embed, when(c.changedAt), c.fanout === "queued" ? badge("queued", "ok") : badge(c.fanout, "bad")]),
        { testid: "trace-pending-changes", empty: "No change pending." }),
      table(["fan-out job", "embed", "row", "done / total", "state", "attempts", "last error", "this document"],
        t.fanout.fanouts.map((f) => [f.id, f.embed, f.link, fanoutProgress(f), f.state, num(f.attempts), clip(f.lastError, { className: "error-text" }), f.reached ? badge("bumped", "ok") : badge("still to come", "warn")]),
        { testid: "trace-fanouts", empty: "No fan-out queued." }),
    ) : null,
    t.deadJobs.length ? section("Dead jobs", table(["id", "reason", "attempts", "last error", "dead since"],
      t.deadJobs.map((d) => [d.id, d.reason, num(d.attempts), clip(d.lastError, { className: "error-text" }), when(d.deadAt)]))) : null,
    section("History", table(["when", "event", "tag", "priority", "job", "enqueued by", "detail"],
      t.events.map((e) => [when(e.at), badge(e.kind, e.kind === "parked" || e.kind === "expired" ? "bad" : e.kind === "enqueued" ? "muted" : "ok"), e.tag ?? "", num(e.priority), e.jobId ?? "", viaText(e.via), clip(e.detail)]),
      { testid: "trace-events", empty: "No recorded event." })),
  ]);
};
