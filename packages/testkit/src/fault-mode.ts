/**
 * The faults the proxy in front of Elasticsearch (`startFaultProxy`) injects. Modes switch at runtime; each request is handled by the mode current when it arrives.
 *
 * - `pass`: forwards as is.
 * - `latency`: buffers the request, waits `ms` (plus up to `jitterMs` at random, which
 *   reorders concurrent requests), then forwards it even if the client gave up meanwhile (so a
 *   timed-out write still lands, late). With `bulkOnly`, only `_bulk` requests wait; the rest
 *   pass at once. A delayed `_bulk` counts in `bulkRequests` when it arrives.
 * - `refuse`: closes the listening socket (connection refused) and drops open connections.
 * - `reset`: accepts, then destroys the connection at once (connection reset).
 * - `hang`: accepts and never answers.
 * - `status`: answers `status` (429, 503…) with an Elasticsearch-shaped error, forwarding nothing.
 * - `cut`: forwards, then sends the status line, headers and half the body and destroys the
 *   connection (the upstream did the work; the client sees a broken response).
 * - `dropBulkItems`: removes a fraction of the action(+source) pairs of every `_bulk` request
 *   before forwarding, and their items from the response, answering 200 OK. With `forge`, the
 *   dropped items are reported as created instead of omitted (the "200 OK, but not indexed" lie).
 * - `rejectBulkItems`: answers a fraction of the items of every `_bulk` request with a per-item
 *   `status` (429 rejected execution, 503 unavailable shards) without forwarding them; the rest
 *   go through. A `status` or `rejectBulkItems` mode with `times` falls back to `pass` after
 *   that many faulty answers.
 * - `bulkSizeLimit`: a `_bulk` body over `maxBytes` is answered 413 (Elasticsearch's
 *   `http.max_content_length`); smaller ones are forwarded.
 */
export type FaultMode =
  | { kind: "pass" }
  | { kind: "latency"; ms: number; jitterMs?: number; bulkOnly?: boolean }
  | { kind: "refuse" }
  | { kind: "reset" }
  | { kind: "hang" }
  | { kind: "status"; status: number; times?: number }
  | { kind: "cut" }
  | { kind: "dropBulkItems"; fraction: number; forge?: boolean }
  | { kind: "rejectBulkItems"; status: number; fraction: number; times?: number }
  | { kind: "bulkSizeLimit"; maxBytes: number };

/** Shorthands for the modes without parameters; "429"/"503" answer that status. */
export type FaultModeName = "pass" | "refuse" | "reset" | "hang" | "cut" | "429" | "503";

export interface FaultProxyStats {
  requests: number;
  passed: number;
  delayed: number;
  refused: number;
  reset: number;
  hung: number;
  cut: number;
  /** Synthesized error answers by status. */
  statuses: Record<number, number>;
  /** Delayed requests not yet answered by the upstream (late writes still to land). */
  pendingDelayed: number;
  bulkRequests: number;
  bulkItems: number;
  bulkItemsDropped: number;
  /** Items answered with an injected per-item error (`rejectBulkItems`). */
  bulkItemsRejected: number;
  /** `_bulk` requests answered 413 (`bulkSizeLimit`). */
  bulkTooLarge: number;
}

export function emptyStats(): FaultProxyStats {
  return { requests: 0, passed: 0, delayed: 0, refused: 0, reset: 0, hung: 0, cut: 0, statuses: {}, pendingDelayed: 0, bulkRequests: 0, bulkItems: 0, bulkItemsDropped: 0, bulkItemsRejected: 0, bulkTooLarge: 0 };
}

export function normalize(mode: FaultMode | FaultModeName): FaultMode {
  if (typeof mode !== "string") {
    if (mode.kind === "dropBulkItems" && !(mode.fraction >= 0 && mode.fraction <= 1)) throw new Error("dropBulkItems fraction must be in [0, 1]");
    if (mode.kind === "latency" && !(mode.ms >= 0)) throw new Error("latency ms must be >= 0");
    if (mode.kind === "rejectBulkItems" && !(mode.fraction >= 0 && mode.fraction <= 1)) throw new Error("rejectBulkItems fraction must be in [0, 1]");
    if (mode.kind === "bulkSizeLimit" && !(mode.maxBytes > 0)) throw new Error("bulkSizeLimit maxBytes must be > 0");
    return mode;
  }
  if (mode === "429" || mode === "503") return { kind: "status", status: Number(mode) };
  return { kind: mode };
}

