import type http from "node:http";
import type { BulkItemRecord } from "./fault-proxy.js";

/** NDJSON `_bulk` handling of the fault proxy. */

/** POST/PUT of `/_bulk` or `/<index>/_bulk`. */
export function isBulk(req: http.IncomingMessage): boolean {
  if (req.method !== "POST" && req.method !== "PUT") return false;
  const path = new URL(req.url ?? "/", "http://x").pathname;
  return /^\/(?:[^/]+\/)?_bulk\/?$/.test(path);
}

/** A `_bulk` body split into items: the action line and, except for delete, its source line. */
export interface BulkLine {
  action: string;
  meta: Record<string, unknown>;
  lines: string[];
}

export function parseBulk(body: string): BulkLine[] {
  const lines = body.split("\n").filter((l) => l.trim().length > 0);
  const out: BulkLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const head = JSON.parse(lines[i]!) as Record<string, Record<string, unknown>>;
    const action = Object.keys(head)[0]!;
    const item: BulkLine = { action, meta: head[action] ?? {}, lines: [lines[i]!] };
    if (action !== "delete") item.lines.push(lines[++i] ?? "{}");
    out.push(item);
  }
  return out;
}

/** Which items to drop: the expected fraction exactly, rounding the remainder at random. */
export function pickDrops(n: number, fraction: number, random: () => number): Set<number> {
  const exact = n * fraction;
  let k = Math.floor(exact) + (random() < exact - Math.floor(exact) ? 1 : 0);
  const idx = [...Array(n).keys()];
  const drops = new Set<number>();
  while (k-- > 0 && idx.length > 0) drops.add(idx.splice(Math.floor(random() * idx.length), 1)[0]!);
  return drops;
}

type ItemResults = Record<string, Record<string, unknown>>[];

/** What observers see of the forwarded items: action, id, version and Elasticsearch's status. */
export function itemRecords(kept: readonly BulkLine[], upItems: ItemResults): BulkItemRecord[] {
  return kept.map((k, i) => {
    const r = upItems[i]?.[k.action] ?? {};
    return {
      action: k.action,
      index: (k.meta._index as string | undefined) ?? undefined,
      id: String(k.meta._id ?? r._id ?? ""),
      version: k.meta.version === undefined ? undefined : Number(k.meta.version),
      versionType: (k.meta.version_type as string | undefined) ?? undefined,
      status: Number(r.status ?? 0),
    };
  });
}

/** The Elasticsearch error an injected status stands for. */
export function injectedError(status: number): { type: string; reason: string } {
  const type =
    status === 429 ? "es_rejected_execution_exception" : status === 503 ? "unavailable_shards_exception" : status === 413 ? "content_too_long_exception" : "fault_injected_exception";
  return { type, reason: `injected by fault proxy (${status})` };
}

/**
 * The answer's items: the upstream's for forwarded items, in order; dropped ones omitted, or
 * with `forge`, reported as created (deleted) so the client believes they succeeded, or with
 * `rejectStatus`, answered with that per-item error.
 */
export function mergeItems(items: readonly BulkLine[], drops: ReadonlySet<number>, upItems: ItemResults, forge: boolean, rejectStatus?: number): ItemResults {
  const merged: ItemResults = [];
  let next = 0;
  items.forEach((item, i) => {
    if (!drops.has(i)) {
      const r = upItems[next++];
      if (r) merged.push(r);
    } else if (rejectStatus !== undefined) {
      merged.push({ [item.action]: { _index: item.meta._index, _id: item.meta._id, status: rejectStatus, error: injectedError(rejectStatus) } });
    } else if (forge) {
      const result = item.action === "delete" ? "deleted" : "created";
      merged.push({ [item.action]: { _index: item.meta._index, _id: item.meta._id, _version: item.meta.version ?? 1, result, status: item.action === "delete" ? 200 : 201 } });
    }
  });
  return merged;
}
