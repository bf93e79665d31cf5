import { api } from "../api.js";
import { confirmAction } from "../confirm-dialog.js";
import { h, num } from "../dom.js";
import { actionButton, field, link, section, select, type View } from "../ui.js";

export const reindexView: View = async (main, ctx) => {
  const collection = select("collection", ctx.collections.map((c) => [c.name, c.name]));
  const scope = h("select", { name: "scope", "data-testid": "reindex-scope" });
  const value = h("input", { name: "value", placeholder: "e.g. acct:ada@example.com", "data-testid": "reindex-value" });
  const from = h("input", { name: "from", placeholder: "2026-01-01T00:00:00Z" });
  const to = h("input", { name: "to", placeholder: "2026-02-01T00:00:00Z" });
  const ids = h("textarea", { name: "ids", rows: 3, placeholder: "ids, separated by spaces, commas or lines" });
  const force = h("input", { type: "checkbox", name: "force" });
  const priority = h("input", { name: "priority", inputmode: "numeric", placeholder: "default: 100 by value, 1000 otherwise", size: 10 });
  const result = h("div", { class: "result", "data-testid": "reindex-result" });
  const rows = { value: field("Value", value), from: field("From (inclusive)", from), to: field("To (exclusive)", to), ids: field("Ids", ids) };
  const fillScopes = () => {
    const c = ctx.collections.find((x) => x.name === collection.value);
    scope.replaceChildren(...(c?.scopes ?? []).map((s) => h("option", { value: s.name }, `${s.name}${s.description ? ` — ${s.description}` : ` (${s.kind})`}`)));
    showFields();
  };
  const kindOf = () => ctx.collections.find((x) => x.name === collection.value)?.scopes.find((s) => s.name === scope.value)?.kind ?? "all";
  const showFields = () => {
    const kind = kindOf();
    rows.value.hidden = kind !== "equals";
    rows.from.hidden = rows.to.hidden = kind !== "range";
    rows.ids.hidden = kind !== "ids";
  };
  collection.addEventListener("change", fillScopes);
  scope.addEventListener("change", showFields);
  fillScopes();

  const submit = actionButton(ctx, "Start re-index…", async () => {
    const kind = kindOf();
    const body: Record<string, unknown> = { collection: collection.value, scope: scope.value };
    if (kind === "equals") body.value = value.value.trim();
    if (kind === "range") {
      if (from.value.trim()) body.from = from.value.trim();
      if (to.value.trim()) body.to = to.value.trim();
    }
    if (kind === "ids") body.ids = ids.value.split(/[\s,]+/).filter(Boolean);
    if (force.checked) body.force = true;
    if (priority.value.trim()) body.priority = Number(priority.value.trim());
    const what = kind === "all" ? "EVERY entity" : kind === "equals" ? `${scope.value} = ${String(body.value)}` : kind === "ids" ? `${(body.ids as string[]).length} id(s)` : `${scope.value} in [${String(body.from ?? "…")}, ${String(body.to ?? "…")})`;
    if (!(await confirmAction({ title: "Start this re-index?", body: `One job per ${collection.value} matching ${what}${force.checked ? ", forced (rewritten even if current)" : ""}.`, confirm: "Enqueue jobs" }))) return;
    const r = await api<{ enqueued: number; priority: number; tag: string }>("POST", "reindex", body);
    result.replaceChildren(
      h("p", { class: "ok-text" }, `Enqueued ${num(r.enqueued)} job(s) at priority ${r.priority}, tag ${r.tag}. `),
      link("See its jobs →", "jobs", { tag: r.tag, priority: String(r.priority) }, { "data-testid": "reindex-jobs-link" }),
    );
  }, { "data-testid": "reindex-submit", class: "primary" });

  main.append(section(
    "Re-index",
    h("p", { class: "muted" }, "Enqueues one job per matching entity in one statement, at a low priority and a reindex tag so live traffic goes first and no live alert fires. Every job is verified by reading back."),
    h("div", { class: "form-grid" }, field("Collection", collection), field("Scope", scope), rows.value, rows.from, rows.to, rows.ids, field("Priority", priority), h("label", { class: "check" }, force, " force (rewrite even current documents)")),
    h("div", { class: "toolbar" }, submit),
    result,
  ));
};
