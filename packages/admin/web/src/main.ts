import "./style.css";
import { api, ApiError, setCsrfToken, type Session } from "./api.js";
import { clear, h } from "./dom.js";
import type { CollectionInfo } from "./types.js";
import type { View, ViewContext } from "./ui.js";
import { auditView } from "./views/audit-view.js";
import { deadJobsView } from "./views/dead-jobs-view.js";
import { drainersView } from "./views/drainers-view.js";
import { jobsView } from "./views/jobs-view.js";
import { lanesView } from "./views/lanes-view.js";
import { loginView } from "./views/login-view.js";
import { overviewView } from "./views/overview-view.js";
import { reindexView } from "./views/reindex-view.js";
import { traceView } from "./views/trace-view.js";
import { verifyView } from "./views/verify-view.js";

const VIEWS: Record<string, { title: string; view: View; autoRefresh: boolean }> = {
  overview: { title: "Overview", view: overviewView, autoRefresh: true },
  lanes: { title: "Lanes", view: lanesView, autoRefresh: true },
  jobs: { title: "Queued jobs", view: jobsView, autoRefresh: false },
  dead: { title: "Parked / expired", view: deadJobsView, autoRefresh: false },
  reindex: { title: "Re-index", view: reindexView, autoRefresh: false },
  verify: { title: "Verify", view: verifyView, autoRefresh: true },
  trace: { title: "Entity trace", view: traceView, autoRefresh: false },
  drainers: { title: "Drainers", view: drainersView, autoRefresh: true },
  audit: { title: "Audit log", view: auditView, autoRefresh: false },
};
const REFRESH_MS = 5_000;

const root = document.getElementById("app")!;
let timer: ReturnType<typeof setTimeout> | undefined;

async function start(): Promise<void> {
  try {
    const session = await api<Session>("GET", "session");
    setCsrfToken(session.csrfToken);
    const { items } = await api<{ items: CollectionInfo[] }>("GET", "collections");
    shell(session, items);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return loginView(root, start);
    root.replaceChildren(h("p", { class: "card error-text" }, `The console could not load: ${String(err)}`));
  }
}

function shell(session: Session, collections: CollectionInfo[]): void {
  const main = h("main", { id: "main" });
  const notice = h("div", { class: "notice", role: "status", "data-testid": "notice" });
  const nav = h("nav", {}, h("div", { class: "brand" }, "Tether"), Object.entries(VIEWS).map(([k, v]) => h("a", { href: `#/${k}`, "data-view": k }, v.title)));
  const who = h("div", { class: "who", "data-testid": "who" }, `${session.name} · ${session.role}`, " ",
    h("button", { type: "button", class: "link", onclick: async () => {
      await api("DELETE", "session").catch(() => undefined);
      location.hash = "";
      location.reload();
    } }, "Log out"));
  const refresh = h("button", { type: "button", onclick: () => void render() }, "Refresh");
  const title = h("h1", {});
  root.replaceChildren(h("div", { class: "layout" }, nav, h("div", { class: "content" }, h("header", {}, title, h("div", { class: "header-right" }, refresh, who)), notice, main)));

  const notify = (message: string, kind: "ok" | "error" = "ok") => {
    notice.replaceChildren(h("p", { class: kind === "error" ? "error-text" : "ok-text" }, message));
  };
  let rendering = 0;
  async function render(): Promise<void> {
    clearTimeout(timer);
    const [path, query] = (location.hash.replace(/^#\/?/, "") || "overview").split("?");
    const key = path && VIEWS[path] ? path : "overview";
    const entry = VIEWS[key]!;
    title.textContent = entry.title;
    document.title = `${entry.title} · Tether`;
    for (const a of nav.querySelectorAll("a")) a.classList.toggle("active", a.getAttribute("data-view") === key);
    const ctx: ViewContext = { session, collections, params: new URLSearchParams(query ?? ""), refresh: () => void render(), notify };
    const mine = ++rendering;
    const next = h("div", { class: "view", "data-testid": `view-${key}` });
    try {
      await entry.view(next, ctx);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return loginView(root, start);
      next.replaceChildren(h("p", { class: "card error-text" }, err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err)));
    }
    if (mine !== rendering) return;
    clear(main);
    main.appendChild(next);
    main.setAttribute("data-rendered", String(mine));
    if (entry.autoRefresh) {
      timer = setTimeout(() => {
        // Never re-render under an open confirmation or while someone is typing.
        if (document.querySelector("dialog[open]") || (document.activeElement && main.contains(document.activeElement) && document.activeElement.tagName !== "BUTTON")) {
          timer = setTimeout(() => void render(), REFRESH_MS);
        } else void render();
      }, REFRESH_MS);
    }
  }
  window.onhashchange = () => {
    notice.replaceChildren();
    void render();
  };
  void render();
}

void start();
