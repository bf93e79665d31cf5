import { api } from "../api.js";
import { confirmAction } from "../confirm-dialog.js";
import { age, h, num, table, when } from "../dom.js";
import { actionButton, badge, link, section, type View } from "../ui.js";
import type { Lane } from "../types.js";

export const lanesView: View = async (main, ctx) => {
  const { items } = await api<{ items: Lane[] }>("GET", "lanes");
  main.append(
    section(
      "Lanes",
      h("p", { class: "muted" }, "A lane is every job of one name. Pausing it stops every drainer from claiming its jobs from their next pass; writes keep enqueueing."),
      table(
        ["lane", "state", "queued", "due", "future", "parked", "oldest due", ""],
        items.map((l) => [
          h("strong", {}, l.name),
          l.paused ? h("span", {}, badge("paused", "warn"), ` ${l.paused.reason ?? ""} `, h("span", { class: "muted" }, `since ${when(l.paused.pausedAt)}`)) : badge("running", "ok"),
          num(l.total), num(l.due), num(l.future), num(l.parked), age(l.oldestDueAgeSeconds),
          h("span", { class: "row-actions" },
            l.paused
              ? actionButton(ctx, "Resume", async () => {
                  if (!(await confirmAction({ title: `Resume ${l.name}?`, body: "Drainers claim its jobs again from their next pass.", confirm: "Resume" }))) return;
                  await api("POST", `lanes/${encodeURIComponent(l.name)}/resume`, {});
                  ctx.notify(`${l.name} resumed`);
                  ctx.refresh();
                }, { "data-testid": `resume-${l.name}` })
              : actionButton(ctx, "Pause…", async () => {
                  const reason = await confirmAction({ title: `Pause ${l.name}?`, body: "No drainer claims its jobs until it is resumed; a long pause fires the oldest-due alert.", confirm: "Pause lane", input: { label: "Reason", placeholder: "e.g. Elasticsearch upgrade" } });
                  if (typeof reason !== "string") return;
                  await api("POST", `lanes/${encodeURIComponent(l.name)}/pause`, { reason });
                  ctx.notify(`${l.name} paused`);
                  ctx.refresh();
                }, { "data-testid": `pause-${l.name}`, class: "danger" }),
            link("jobs", "jobs", { name: l.name }),
          ),
        ]),
        { testid: "lanes", empty: "No lanes yet." },
      ),
    ),
    ...items.filter((l) => l.groups.length > 0).map((l) =>
      section(`${l.name} by tag and priority`, table(
        ["tag", "priority", "queued", "due", "future", "expired", "oldest due"],
        l.groups.map((g) => [g.tag, num(g.priority), num(g.total), num(g.due), num(g.future), num(g.expired), age(g.oldestDueAgeSeconds)]),
      )),
    ),
  );
};
