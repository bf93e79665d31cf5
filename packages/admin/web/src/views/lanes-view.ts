import { api } from "../api.js";
import { confirmAction } from "../confirm-dialog.js";
import { age, h, num, table, when } from "../dom.js";
import { actionButton, badge, link, section, type View, type ViewContext } from "../ui.js";
import type { Lane } from "../types.js";

export const lanesView: View = async (main, ctx) => {
  const { items } = await api<{ items: Lane[] }>("GET", "lanes");
  main.append(
    section(
      "Lanes",
      h("p", { class: "muted" }, "A lane is every job of one name; each configured collection has one, even before its first job, and a fan-out lane when its documents read other tables through a fan-out (a change there waits in it until a drainer expands it). Pausing a lane stops every drainer from claiming its jobs from their next pass; writes keep enqueueing."),
      table(["lane", "collection", "state", "queued", "due", "future", "parked", "oldest due", ""], items.map((l) => laneRow(ctx, l)), { testid: "lanes", empty: "No lanes yet." }),
    ),
    ...items.filter((l) => l.groups.length > 0).map((l) =>
      section(`${l.name} by tag and priority`, table(
        ["tag", "priority", "queued", "due", "future", "expired", "oldest due"],
        l.groups.map((g) => [g.tag, num(g.priority), num(g.total), num(g.due), num(g.future), num(g.expired), age(g.oldestDueAgeSeconds)]),
      )),
    ),
  );
};

function laneRow(ctx: ViewContext, l: Lane): (Node | string)[] {
  // A lane no configured collection handles (its jobs come from elsewhere) is acted on by its
  // exact job name, which the API accepts only when forced.
  const force = l.collection ? {} : { force: true };
  const path = `lanes/${encodeURIComponent(l.name)}`;
  const toggle = l.paused
    ? actionButton(ctx, "Resume", async () => {
        if (!(await confirmAction({ title: `Resume ${l.name}?`, body: "Drainers claim its jobs again from their next pass.", confirm: "Resume" }))) return;
        await api("POST", `${path}/resume`, force);
        ctx.notify(`${l.name} resumed`);
        ctx.refresh();
      }, { "data-testid": `resume-${l.name}` })
    : actionButton(ctx, "Pause…", async () => {
        const reason = await confirmAction({ title: `Pause ${l.name}?`, body: "No drainer claims its jobs until it is resumed; a long pause fires the oldest-due alert.", confirm: "Pause lane", input: { label: "Reason", placeholder: "e.g. Elasticsearch upgrade" } });
        if (typeof reason !== "string") return;
        await api("POST", `${path}/pause`, { reason, ...force });
        ctx.notify(`${l.name} paused`);
        ctx.refresh();
      }, { "data-testid": `pause-${l.name}`, class: "danger" });
  return [
    h("strong", {}, l.name),
    l.collection ? h("span", {}, l.collection, l.kind === "fanout" ? [" ", badge("fan-out", "muted")] : null) : h("span", { class: "muted" }, "not configured"),
    l.paused ? h("span", {}, badge("paused", "warn"), ` ${l.paused.reason ?? ""} `, h("span", { class: "muted" }, `since ${when(l.paused.pausedAt)}`)) : badge("running", "ok"),
    num(l.total), num(l.due), num(l.future), num(l.parked), age(l.oldestDueAgeSeconds),
    h("span", { class: "row-actions" }, toggle, link("jobs", "jobs", { name: l.name })),
  ];
}
