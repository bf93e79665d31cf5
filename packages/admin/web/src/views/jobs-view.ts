import { api, qs } from "../api.js";
import { confirmAction } from "../confirm-dialog.js";
import { h, num, table, when } from "../dom.js";
import { actionButton, badge, clip, field, formValues, link, section, select, traceLink, viaText, type View } from "../ui.js";
import type { Paged, QueuedJob } from "../types.js";

const FILTERS = ["name", "tag", "priority", "entityId", "state", "cursor"] as const;

export const jobsView: View = async (main, ctx) => {
  const f = Object.fromEntries(FILTERS.map((k) => [k, ctx.params.get(k) ?? undefined])) as Record<(typeof FILTERS)[number], string | undefined>;
  const data = await api<Paged<QueuedJob>>("GET", `jobs${qs({ ...f, limit: 50 })}`);
  const form = h("form", { class: "filters", "data-testid": "jobs-filter" },
    field("Lane", h("input", { name: "name", value: f.name ?? "", placeholder: "sync_annotation" })),
    field("Tag", h("input", { name: "tag", value: f.tag ?? "", placeholder: "live, reindex…" })),
    field("Priority", h("input", { name: "priority", value: f.priority ?? "", inputmode: "numeric", size: 6 })),
    field("Entity id", h("input", { name: "entityId", value: f.entityId ?? "" })),
    field("State", select("state", [["", "any"], ["due", "due"], ["future", "future"], ["expired", "expired"]], f.state ?? "")),
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `#/jobs?${new URLSearchParams(formValues(form)).toString()}`;
  });
  const boxes = new Map<string, HTMLInputElement>();
  const selected = () => [...boxes].filter(([, b]) => b.checked).map(([id]) => id);
  const rows = data.items.map((j) => {
    const box = h("input", { type: "checkbox", "aria-label": `select job ${j.id}` });
    boxes.set(j.id, box);
    return [
      box, j.id, j.name,
      traceLink(ctx, j.name, j.entityId),
      j.tag, num(j.priority),
      badge(j.state, j.state === "due" ? "ok" : j.state === "expired" ? "bad" : "muted"),
      num(j.attempts), clip(j.lastError, { className: "error-text" }), when(j.scheduledAt), viaText(j.via),
    ];
  });
  const priority = h("input", { type: "number", min: 0, max: 1000000, value: 1, "aria-label": "new priority", class: "narrow" });
  main.append(section(
    "Queued jobs",
    form,
    h("div", { class: "toolbar" },
      actionButton(ctx, "Cancel selected", async () => {
        const ids = selected();
        if (ids.length === 0) return ctx.notify("Select jobs first", "error");
        if (!(await confirmAction({ title: `Cancel ${ids.length} job(s)?`, body: "They are deleted: their entities are not synced unless written again or found by verify.", confirm: "Cancel jobs" }))) return;
        const r = await api<{ cancelled: number }>("POST", "jobs/cancel", { ids });
        ctx.notify(`${r.cancelled} job(s) cancelled`);
        ctx.refresh();
      }, { class: "danger" }),
      h("span", { class: "inline" }, "Priority ", priority),
      actionButton(ctx, "Reprioritize selected", async () => {
        const ids = selected();
        if (ids.length === 0) return ctx.notify("Select jobs first", "error");
        const r = await api<{ updated: number }>("POST", "jobs/reprioritize", { ids, priority: Number(priority.value) });
        ctx.notify(`${r.updated} job(s) now at priority ${priority.value}`);
        ctx.refresh();
      }),
    ),
    table(["", "id", "lane", "entity", "tag", "priority", "state", "attempts", "last error", "scheduled", "enqueued by"], rows, { testid: "jobs", empty: "No queued job matches." }),
    data.nextCursor ? link("Next page →", "jobs", { ...Object.fromEntries(Object.entries(f).filter(([k, v]) => v && k !== "cursor")) as Record<string, string>, cursor: data.nextCursor }) : null,
  ));
};
