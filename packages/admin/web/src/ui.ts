import { ApiError, type Session } from "./api.js";
import { h, num } from "./dom.js";
import type { CollectionInfo } from "./types.js";

/** What every view gets. */
export interface ViewContext {
  session: Session;
  /** The configured collections (for selects and trace links). */
  collections: CollectionInfo[];
  params: URLSearchParams;
  /** Re-renders the current view (after an action). */
  refresh(): void;
  /** Shows a message above the view. */
  notify(message: string, kind?: "ok" | "error"): void;
}

export type View = (main: HTMLElement, ctx: ViewContext) => Promise<void>;

export const canAct = (s: Session) => s.role === "operator";

/** A button that runs `action` for operators and is disabled, with a reason, for viewers. */
export function actionButton(ctx: ViewContext, label: string, action: () => Promise<void>, attrs: Record<string, string> = {}): HTMLButtonElement {
  const allowed = canAct(ctx.session);
  const b = h("button", { type: "button", ...attrs, disabled: !allowed, title: allowed ? "" : "Needs an operator token" }, label);
  b.addEventListener("click", async () => {
    b.disabled = true;
    try {
      await action();
    } catch (err) {
      ctx.notify(err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err), "error");
    } finally {
      b.disabled = !allowed;
    }
  });
  return b;
}

export function badge(label: string, kind: "ok" | "warn" | "bad" | "muted"): HTMLElement {
  return h("span", { class: `badge ${kind}` }, label);
}

export function section(title: string, ...children: (Node | null)[]): HTMLElement {
  return h("section", { class: "card" }, h("h2", {}, title), ...children);
}

export function field(label: string, input: HTMLElement): HTMLElement {
  return h("label", { class: "field" }, h("span", {}, label), input);
}

export function select(name: string, options: [string, string][], value = ""): HTMLSelectElement {
  const s = h("select", { name }, options.map(([v, l]) => h("option", { value: v }, l)));
  // Only a value that is one of the options: anything else would blank the select.
  if (options.some(([v]) => v === value)) s.value = value;
  return s;
}

/** Link to a view with query parameters. */
export function link(label: string, view: string, params: Record<string, string> = {}, attrs: Record<string, string> = {}): HTMLAnchorElement {
  const q = new URLSearchParams(params).toString();
  return h("a", { href: `#/${view}${q ? `?${q}` : ""}`, ...attrs }, label);
}

/** Characters of a long value shown in a table before "show all". */
export const CLIP_CHARS = 160;

/**
 * A value that may be long (a last error quoting a document, kwargs, a column of a row): short
 * ones as they are; long ones cut to their head with the whole value one click away, in a
 * scroll box of bounded height, so one 10 kB error cannot stretch a table or the page. A plain
 * <details>: no script, and the value is text, never HTML.
 */
export function clip(value: string | null | undefined, opts: { max?: number; className?: string } = {}): HTMLElement | string {
  if (value === null || value === undefined || value === "") return "";
  const max = opts.max ?? CLIP_CHARS;
  const cls = opts.className ?? "cell-value";
  if (value.length <= max) return h("span", { class: cls }, value);
  return h("details", { class: `clip ${cls}` },
    h("summary", {}, h("span", { class: "clip-head" }, `${value.slice(0, max)}…`), " ", h("span", { class: "clip-more" }, `show all ${num(value.length)} characters`), h("span", { class: "clip-less" }, "hide")),
    h("pre", { class: "clip-full", "data-testid": "clip-full" }, value),
  );
}

/** A JSON value in a table cell, clipped like any long value. */
export const clipJson = (v: unknown, opts: { max?: number } = {}) => clip(v === null || v === undefined ? "" : JSON.stringify(v), { ...opts, className: "small mono" });

/** Pretty JSON as text (never HTML). */
export function json(v: unknown): HTMLElement {
  return h("pre", { class: "json" }, JSON.stringify(v, null, 2));
}

/** Reads a form's non-empty fields. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new FormData(form).entries()) if (typeof v === "string" && v.trim() !== "") out[k] = v.trim();
  return out;
}

/** A link to the trace of an entity of the lane `jobName`, or the bare id when no collection has that lane. */
export function traceLink(ctx: ViewContext, jobName: string, id: string | null): Node | string {
  if (!id) return "–";
  const c = ctx.collections.find((x) => x.jobName === jobName);
  return c ? link(id, "trace", { collection: c.name, id }) : id;
}

/** Where a job came from when a change of an embedded table enqueued it: "shop_category.id = 7 (fan-out 12)". */
export function viaText(via: { table: string; column: string; value: string; fanout?: string } | null | undefined): string {
  if (!via) return "";
  return `${via.table}.${via.column} = ${via.value}${via.fanout ? ` (fan-out ${via.fanout})` : ""}`;
}

/** A fan-out's progress: a bar and "done / total" ("?" until its total is counted). */
export function fanoutProgress(f: { done: number; total: number | null }): HTMLElement {
  return h("span", { class: "inline" },
    f.total ? h("progress", { max: f.total, value: Math.min(f.done, f.total) }) : null,
    `${num(f.done)} / ${f.total === null ? "?" : num(f.total)}`);
}
