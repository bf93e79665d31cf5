import { h, svg, text } from "./dom.js";

export interface Series {
  label: string;
  points: { at: string; value: number }[];
  kind: "bars" | "line";
}

const W = 560;
const H = 180;
const PAD = { left: 44, right: 10, top: 12, bottom: 26 };

const clock = (iso: string) => new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });

/**
 * A small SVG chart over the last hour: bars (per-minute counts) or a line (samples). Drawn with
 * DOM calls only; the axis says the scale so the numbers stay readable.
 */
export function chart(title: string, s: Series, opts: { testid: string; unit: string; windowMs?: number }): HTMLElement {
  const now = Date.now();
  const windowMs = opts.windowMs ?? 3_600_000;
  const from = now - windowMs;
  const max = Math.max(1, ...s.points.map((p) => p.value));
  const x = (iso: string) => PAD.left + ((new Date(iso).getTime() - from) / windowMs) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - (v / max) * (H - PAD.top - PAD.bottom);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${title}: ${s.points.length} points, max ${max} ${opts.unit}`, class: "chart" });
  for (const frac of [0, 0.5, 1]) {
    const v = Math.round(max * frac);
    root.appendChild(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: "grid" }));
    root.appendChild(svg("text", { x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, text(v.toLocaleString("en-US"))));
  }
  for (const frac of [0, 0.25, 0.5, 0.75, 1]) {
    const t = new Date(from + windowMs * frac).toISOString();
    // The outer labels align inward so they are not cut at the edges.
    const anchor = frac === 0 ? "start" : frac === 1 ? "end" : "middle";
    root.appendChild(svg("text", { x: x(t), y: H - 8, "text-anchor": anchor, class: "axis" }, text(clock(t))));
  }
  const visible = s.points.filter((p) => new Date(p.at).getTime() >= from);
  if (s.kind === "bars") {
    const bw = Math.max(2, ((W - PAD.left - PAD.right) / 60) * 0.8);
    for (const p of visible) {
      root.appendChild(svg("rect", { x: x(p.at), y: y(p.value), width: bw, height: Math.max(0, H - PAD.bottom - y(p.value)), class: "bar" }, svg("title", {}, text(`${clock(p.at)}: ${p.value}`))));
    }
  } else if (visible.length > 0) {
    const d = visible.map((p, i) => `${i === 0 ? "M" : "L"}${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
    root.appendChild(svg("path", { d, class: "line" }));
    const last = visible[visible.length - 1]!;
    root.appendChild(svg("circle", { cx: x(last.at), cy: y(last.value), r: 3, class: "dot" }));
  }
  const latest = visible.length ? visible[visible.length - 1]!.value : 0;
  const total = visible.reduce((a, p) => a + p.value, 0);
  return h(
    "figure",
    { class: "card chart-card", "data-testid": opts.testid },
    h("figcaption", {}, h("strong", {}, title), h("span", { class: "muted" }, s.kind === "bars" ? ` ${total.toLocaleString("en-US")} ${opts.unit} in the last hour` : ` now ${latest.toLocaleString("en-US")} ${opts.unit}`)),
    visible.length === 0 ? h("p", { class: "empty" }, "No data in the last hour yet.") : root,
  );
}
