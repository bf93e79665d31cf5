import { api } from "../api.js";
import { chart } from "../chart.js";
import { age, h, num, table } from "../dom.js";
import { badge, clip, fanoutProgress, link, section, type View } from "../ui.js";
import type { Overview } from "../types.js";

export const overviewView: View = async (main) => {
  const o = await api<Overview>("GET", "overview");
  const perMinute = new Map<string, number>();
  for (const b of o.completion.buckets) perMinute.set(b.at, (perMinute.get(b.at) ?? 0) + b.confirmed);
  const firing = o.alerts.alerts.filter((a) => a.firing);
  main.append(
    h("div", { class: "stats" },
      stat("Queued", num(o.totals.total), "all lanes", "stat-total"),
      stat("Due now", num(o.totals.due), `oldest live ${age(o.totals.oldestDueAgeSeconds)}`, "stat-due"),
      stat("Fan-out work", num(o.fanout.length), `${num(o.fanout.inProgress.length)} fan-out(s), oldest ${age(o.fanout.oldestDueAgeSeconds)}`, "stat-fanout"),
      stat("Parked", num(o.totals.parked), "gave up, need a look", "stat-parked", o.totals.parked > 0),
      stat("Expired", num(o.totals.expired), "passed their lifetime", "stat-expired", o.totals.expired > 0),
      stat("Drainers", `${num(o.drainers.alive)} alive`, o.drainers.gone ? `${o.drainers.gone} gone` : "none gone", "stat-drainers", o.drainers.alive === 0),
    ),
    h("div", { class: "charts" },
      chart("Completions per minute", { label: "confirmed", kind: "bars", points: [...perMinute].map(([at, value]) => ({ at, value })) }, { testid: "chart-completion", unit: "jobs" }),
      chart("Queue length", { label: "queued", kind: "line", points: o.queueLength.map((p) => ({ at: p.at, value: p.totalLength })) }, { testid: "chart-queue", unit: "jobs" }),
    ),
    section(
      firing.length ? `Alerts: ${firing.length} firing` : "Alerts: all quiet",
      h("ul", { class: "alerts", "data-testid": "alerts" },
        o.alerts.alerts.map((a) =>
          h("li", { class: a.firing ? "firing" : "" },
            h("div", {}, badge(a.firing ? "FIRING" : "ok", a.firing ? "bad" : "ok"), " ", h("strong", {}, a.name)),
            h("p", {}, a.message),
            a.firing ? h("details", { open: true }, h("summary", {}, "Check first"), h("ol", {}, a.check.map((c) => h("li", {}, c)))) : null,
          ),
        ),
      ),
    ),
    section(
      "Fan-outs in progress",
      h("p", { class: "muted" }, "Changes of tables the documents read, being expanded into one sync job per document reached (in bounded chunks). Fan-out work never trips the queue-length or oldest-due alerts."),
      table(
        ["collection", "embed", "row", "done / total", "state", "attempts", "last error", "age"],
        o.fanout.inProgress.map((f) => [
          f.collection, f.embed, f.link, fanoutProgress(f),
          badge(f.state, f.state === "due" ? "ok" : f.state === "expired" ? "bad" : "muted"),
          num(f.attempts), clip(f.lastError, { className: "error-text" }), age(f.ageSeconds),
        ]),
        { testid: "overview-fanouts", empty: "No fan-out in progress." },
      ),
    ),
    section("Lanes", table(
      ["lane", "state", "queued", "due", "future", "parked", "expired", "oldest due"],
      o.lanes.map((l) => [
        link(l.name, "lanes"),
        l.paused ? badge(`paused: ${l.paused.reason ?? "no reason"}`, "warn") : badge("running", "ok"),
        num(l.total), num(l.due), num(l.future), num(l.parked), num(l.deadExpired + l.expired), age(l.oldestDueAgeSeconds),
      ]),
      { testid: "overview-lanes", empty: "No lanes yet." },
    )),
  );
};

function stat(label: string, value: string, sub: string, testid: string, alarm = false): HTMLElement {
  return h("div", { class: `stat card${alarm ? " alarm" : ""}`, "data-testid": testid }, h("div", { class: "label" }, label), h("div", { class: "value" }, value), h("div", { class: "muted" }, sub));
}
