import { api, qs } from "../api.js";
import { confirmAction } from "../confirm-dialog.js";
import { h, num, table, when } from "../dom.js";
import { actionButton, badge, clip, clipJson, field, formValues, link, section, select, traceLink, type View, type ViewContext } from "../ui.js";
import type { DeadJob, Paged } from "../types.js";

export const deadJobsView: View = async (main, ctx) => {
  const reason = ctx.params.get("reason") ?? "";
  const name = ctx.params.get("name") ?? "";
  const cursor = ctx.params.get("cursor") ?? undefined;
  const data = await api<Paged<DeadJob>>("GET", `dead-jobs${qs({ reason, name, cursor, limit: 50 })}`);
  const form = h("form", { class: "filters" },
    field("Reason", select("reason", [["", "parked and expired"], ["parked", "parked"], ["expired", "expired"]], reason)),
    field("Lane", h("input", { name: "name", value: name, placeholder: "sync_annotation" })),
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `#/dead?${new URLSearchParams(formValues(form)).toString()}`;
  });
  const boxes = new Map<string, HTMLInputElement>();
  const selected = () => [...boxes].filter(([, b]) => b.checked).map(([id]) => id);
  const filter = { ...(reason ? { reason } : {}), ...(name ? { name } : {}) };
  const rows = data.items.map((d) => {
    const box = h("input", { type: "checkbox", "aria-label": `select dead job ${d.id}` });
    boxes.set(d.id, box);
    return [box, d.id, d.name, traceLink(ctx, d.name, d.entityId), badge(d.reason, d.reason === "parked" ? "bad" : "warn"), num(d.attempts), clip(d.lastError, { className: "error-text" }), clipJson(d.kwargs, { max: 60 }), d.tag, when(d.deadAt)];
  });
  const act = (verb: "retry" | "discard", all: boolean) => async () => {
    const ids = selected();
    if (!all && ids.length === 0) return ctx.notify("Select jobs first", "error");
    const what = all ? `every ${reason || "parked and expired"} job${name ? ` of ${name}` : ""}` : `${ids.length} job(s)`;
    const body = verb === "retry" ? "They go back to the queue, due now, and are verified like any other." : "They are deleted for good; verify finds their entities if they still differ.";
    if (!(await confirmAction({ title: `${verb === "retry" ? "Retry" : "Discard"} ${what}?`, body, confirm: verb === "retry" ? "Retry" : "Discard" }))) return;
    const r = await api<Record<string, number>>("POST", `dead-jobs/${verb}`, all ? { all: true, filter } : { ids });
    ctx.notify(`${Object.values(r)[0]} job(s) ${verb === "retry" ? "retried" : "discarded"}`);
    ctx.refresh();
  };
  main.append(section(
    "Parked and expired jobs",
    form,
    toolbar(ctx, act),
    table(["", "id", "lane", "entity", "reason", "attempts", "last error", "kwargs", "tag", "dead since"], rows, { testid: "dead-jobs", empty: "No parked or expired job." }),
    data.nextCursor ? link("Next page →", "dead", { ...filter, cursor: data.nextCursor }) : null,
  ));
};

function toolbar(ctx: ViewContext, act: (verb: "retry" | "discard", all: boolean) => () => Promise<void>): HTMLElement {
  return h("div", { class: "toolbar" },
    actionButton(ctx, "Retry selected", act("retry", false), { "data-testid": "retry-selected" }),
    actionButton(ctx, "Discard selected", act("discard", false), { class: "danger" }),
    actionButton(ctx, "Retry all matching", act("retry", true)),
    actionButton(ctx, "Discard all matching", act("discard", true), { class: "danger" }),
  );
}
