import type { Sink } from "@tether/core";

/** Wraps a sink and adds up the wall time spent in each of its calls (where a drain's time goes). */
export function timedSink(inner: Sink): { sink: Sink; spentMs: Record<"fetchStates" | "write", number> } {
  const spentMs = { fetchStates: 0, write: 0 };
  const time =
    <A extends unknown[], R>(key: keyof typeof spentMs, fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      const t = performance.now();
      try {
        return await fn(...a);
      } finally {
        spentMs[key] += performance.now() - t;
      }
    };
  const sink: Sink = {
    kind: inner.kind,
    ensureIndex: (...a) => inner.ensureIndex(...a),
    fetchStates: time("fetchStates", (...a: Parameters<Sink["fetchStates"]>) => inner.fetchStates(...a)),
    ...(inner.fetchVersions ? { fetchVersions: time("fetchStates", (...a: Parameters<NonNullable<Sink["fetchVersions"]>>) => inner.fetchVersions!(...a)) } : {}),
    write: time("write", (...a: Parameters<Sink["write"]>) => inner.write(...a)),
    summarize: (...a) => inner.summarize(...a),
    listStates: (...a) => inner.listStates(...a),
  };
  return { sink, spentMs };
}
