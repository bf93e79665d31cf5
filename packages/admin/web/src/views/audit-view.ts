import { api, qs } from "../api.js";
import { h, table, when } from "../dom.js";
import { badge, clipJson, field, formValues, link, section, select, type View } from "../ui.js";
import type { AuditEntry, Paged } from "../types.js";

export const auditView: View = async (main, ctx) => {
  const actor = ctx.params.get("actor") ?? "";
  const action = ctx.params.get("action") ?? "";
  const outcome = ctx.params.get("outcome") ?? "";
  const data = await api<Paged<AuditEntry>>("GET", `audit${qs({ actor, action, outcome, cursor: ctx.params.get("cursor") ?? undefined, limit: 50 })}`);
  const form = h("form", { class: "filters", "data-testid": "audit-filter" },
    field("Who", h("input", { name: "actor", value: actor })),
    field("Action", h("input", { name: "action", value: action, placeholder: "lane.pause, reindex…" })),
    field("Outcome", select("outcome", [["", "any"], ["ok", "done"], ["refused", "refused (401, 403)"], ["failed", "failed (other errors)"]], outcome)),
    h("button", { type: "submit" }, "Filter"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `#/audit?${new URLSearchParams(formValues(form)).toString()}`;
  });
  main.append(section(
    "Audit log",
    form,
    table(["when", "who", "action", "parameters", "answer"],
      data.items.map((a) => [
        when(a.at), h("span", {}, a.actor, " ", h("span", { class: "muted" }, a.role)), h("strong", {}, a.action),
        clipJson(a.params),
        h("span", {}, badge(`${a.status} ${a.outcome}`, a.outcome === "ok" ? "ok" : a.outcome === "refused" ? "warn" : "bad"), " ", clipJson(a.result)),
      ]),
      { testid: "audit", empty: "No admin action recorded." }),
    data.nextCursor ? link("Older →", "audit", { ...(actor ? { actor } : {}), ...(action ? { action } : {}), ...(outcome ? { outcome } : {}), cursor: data.nextCursor }) : null,
  ));
};

