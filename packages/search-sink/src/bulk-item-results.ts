import type { SinkItemResult, SinkOperation } from "@tether/core";
import { describePermissionDenied, type RefusalContext } from "./permission-denied.js";

/** One item of a `_bulk` answer, under its action key (`{ index: {...} }`). */
export type BulkItem = { _id?: string | null; status: number; error?: { type?: string; reason?: string | null } | null; result?: string };

/** Per-item bulk failures that will not succeed on retry. */
export function isPermanentItemStatus(status: number, type: string | undefined): boolean {
  if (status === 429 || status >= 500) return false;
  if (type === "es_rejected_execution_exception" || type === "circuit_breaking_exception") return false;
  // A write block (flood-stage disk watermark, an operator's read-only block) is lifted again:
  // the item must wait, not park.
  if (type === "cluster_block_exception") return false;
  return status >= 400;
}

/**
 * Classifies a `_bulk` answer into one result per operation, in order. Results are matched by
 * id, not position: a proxy or a partial failure may drop items, and a missing one is retryable.
 * `context` completes a refused item's sentence (the bulk's index, the process's actor).
 */
export function bulkItemResults(ops: readonly SinkOperation[], items: readonly Record<string, unknown>[], context: RefusalContext = {}): SinkItemResult[] {
  const byId = new Map<string, BulkItem>();
  for (const item of items) {
    const r = Object.values(item)[0] as BulkItem | undefined;
    if (r?._id) byId.set(r._id, r);
  }
  return ops.map((op): SinkItemResult => {
    const r = byId.get(op.id);
    if (!r) return { id: op.id, status: "retryable", error: "no result for this item in the bulk response" };
    if (r.status >= 200 && r.status < 300) return { id: op.id, status: "ok" };
    if (r.status === 404 && op.kind === "delete") return { id: op.id, status: "ok" };
    if (r.status === 409) {
      const current = /current version \[(\d+)\]/.exec(r.error?.reason ?? "")?.[1];
      return { id: op.id, status: "conflict", ...(current ? { currentVersion: Number(current) } : {}) };
    }
    // A refused item reads as every other refusal (the index is the bulk's, when the engine names none).
    const denied = r.status === 403 ? describePermissionDenied(r.error?.reason, context) : undefined;
    const error = denied ? denied : `HTTP ${r.status} ${r.error?.type ?? ""}: ${r.error?.reason ?? ""}`.trim();
    return isPermanentItemStatus(r.status, r.error?.type ?? undefined) ? { id: op.id, status: "permanent", error } : { id: op.id, status: "retryable", error };
  });
}
