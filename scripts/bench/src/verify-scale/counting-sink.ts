import type { Sink } from "@tether/core";

/** Calls and wall time of one sink method. */
export interface SinkCallTime {
  calls: number;
  ms: number;
}

/**
 * The sink, with a count of the documents its `listStates` returned (what the bucketed verify
 * compared id by id, in its leaves, as opposed to by bucket sums) and the calls and wall time
 * of each method (where a verify's time goes: the engine, or Postgres and node).
 */
export function countingSink<S extends Sink>(sink: S): { sink: S; listed: () => number; calls: Record<string, SinkCallTime> } {
  let listed = 0;
  const calls: Record<string, SinkCallTime> = {};
  const wrapped = new Proxy(sink, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const fn = value as (...a: unknown[]) => unknown;
      if (typeof prop !== "string" || !["summarize", "listStates", "fetchStates", "countUnkeyed", "countOrphans", "refreshIndex"].includes(prop)) return fn.bind(target);
      return async (...args: unknown[]) => {
        const t = performance.now();
        try {
          const out = await fn.apply(target, args);
          if (prop === "listStates") listed += (out as Map<string, unknown>).size;
          return out;
        } finally {
          const c = (calls[prop] ??= { calls: 0, ms: 0 });
          c.calls += 1;
          c.ms += performance.now() - t;
        }
      };
    },
  });
  return { sink: wrapped, listed: () => listed, calls };
}

/** "summarize 103 calls 2.1 s, listStates …" */
export function describeCalls(calls: Record<string, SinkCallTime>): string {
  return Object.entries(calls)
    .map(([name, c]) => `${name} ${c.calls}× ${(c.ms / 1000).toFixed(1)} s`)
    .join(", ");
}
