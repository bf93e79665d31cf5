import { api } from "../api.js";
import { age, h, num, table, when } from "../dom.js";
import { badge, section, type View } from "../ui.js";
import type { Drainer } from "../types.js";

export const drainersView: View = async (main) => {
  const { items, staleAfterSeconds } = await api<{ items: Drainer[]; staleAfterSeconds: number }>("GET", "drainers");
  main.append(section(
    "Drainers",
    h("p", { class: "muted" }, `Every drainer writes a heartbeat on each pass and on a timer; one silent for more than ${staleAfterSeconds} s is shown as gone.`),
    table(["state", "host", "pid", "version", "started", "last seen", "passes", "failed", "last pass"],
      items.map((d) => [
        badge(d.state, d.state === "alive" ? "ok" : d.state === "gone" ? "bad" : "muted"), d.host, String(d.pid), d.version, when(d.startedAt),
        `${age(d.ageSeconds)} ago`, num(d.passes), num(d.failedPasses),
        d.lastPass ? h("span", { class: "small" }, summary(d.lastPass as Record<string, unknown>), h("br"), h("span", { class: "muted" }, when(d.lastPassAt))) : "–",
      ]),
      { testid: "drainers", empty: "No drainer has reported itself in the last day." }),
  ));
};

function summary(p: Record<string, unknown>): string {
  const keys = ["claimed", "up_to_date", "repaired", "retried", "parked", "expired"];
  const parts = keys.filter((k) => typeof p[k] === "number").map((k) => `${k.replace(/_/g, " ")} ${p[k] as number}`);
  if (typeof p.durationMs === "number") parts.push(`${Math.round(p.durationMs)} ms`);
  if (typeof p.error === "string") parts.push(`error: ${p.error}`);
  return parts.join(" · ");
}
