import { api, qs } from "../api.js";
import { confirmAction } from "../confirm-dialog.js";
import { h, num, table, when } from "../dom.js";
import { actionButton, badge, field, link, section, select, type View } from "../ui.js";
import type { Paged, VerifyRun, VerifyRunDetail } from "../types.js";

export const verifyView: View = async (main, ctx) => {
  const runId = ctx.params.get("run");
  const runs = await api<Paged<VerifyRun>>("GET", `verify-runs${qs({ limit: 20, cursor: ctx.params.get("cursor") ?? undefined })}`);
  const collection = select("collection", ctx.collections.map((c) => [c.name, c.name]));
  const start = actionButton(ctx, "Start verify run…", async () => {
    if (!(await confirmAction({ title: `Verify ${collection.value}?`, body: "Compares the whole collection in Postgres and Elasticsearch and enqueues a repair for every drifted entity. It reads the whole table and index.", confirm: "Start run" }))) return;
    const run = await api<VerifyRun>("POST", "verify-runs", { collection: collection.value });
    location.hash = `#/verify?run=${run.id}`;
  }, { class: "primary", "data-testid": "verify-start" });
  main.append(section(
    "Verify runs",
    h("p", { class: "muted" }, "Anti-entropy: id-range buckets are compared by count, hash and version sums; only differing buckets are drilled into."),
    h("div", { class: "toolbar" }, field("Collection", collection), start),
    table(["run", "collection", "status", "progress", "drifted", "repairs enqueued", "started by", "started", "finished"],
      runs.items.map((r) => [
        link(`#${r.id}`, "verify", { run: r.id }), r.collection, statusBadge(r), progress(r),
        r.status === "running" ? num(r.driftedTotal) : drift(r), num(r.enqueued), r.startedBy, when(r.startedAt), when(r.finishedAt),
      ]),
      { testid: "verify-runs", empty: "No verify run yet." }),
    runs.nextCursor ? link("Older runs →", "verify", { cursor: runs.nextCursor }) : null,
  ));
  if (runId) {
    const d = await api<VerifyRunDetail>("GET", `verify-runs/${encodeURIComponent(runId)}`);
    main.append(section(
      `Run #${d.run.id}: ${d.run.collection}`,
      h("p", {}, statusBadge(d.run), " ", d.run.error ? h("span", { class: "error-text" }, d.run.error) : drift(d.run)),
      h("p", { class: "muted" }, `${num(d.run.bucketsCompared)} buckets compared, ${num(d.run.bucketsDiffering)} differing, ${num(d.run.enqueued)} repair job(s) enqueued.`),
      table(["kind", "entity"], d.results.map((x) => {
        const c = ctx.collections.find((y) => y.name === d.run.collection);
        return [x.kind, c ? link(x.entityId, "trace", { collection: c.name, id: x.entityId }) : x.entityId];
      }), { testid: "verify-results", empty: d.run.status === "running" ? "Still running…" : "No drift found." }),
    ));
  }
};

function statusBadge(r: VerifyRun): HTMLElement {
  return badge(r.status, r.status === "done" ? (r.driftedTotal > 0 ? "warn" : "ok") : r.status === "failed" ? "bad" : "muted");
}

function progress(r: VerifyRun): HTMLElement {
  const pct = r.bucketsTotal ? Math.round((100 * r.bucketsDone) / r.bucketsTotal) : r.status === "done" ? 100 : 0;
  return h("span", { class: "progress" }, h("progress", { max: 100, value: pct }), ` ${pct}%`);
}

function drift(r: VerifyRun): string {
  const parts = Object.entries(r.drifted).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`);
  return parts.length ? parts.join(", ") : "no drift";
}
