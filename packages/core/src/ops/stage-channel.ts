import { channel } from "node:diagnostics_channel";

/** One stage's wall time, as published on a stage channel. */
export interface StageTiming<S extends string> {
  stage: S;
  ms: number;
  /** Items the stage handled: jobs, rows, documents or operations. */
  items: number;
}

export interface StageChannel<S extends string> {
  /** Whether anyone listens (callers skip their clock reads otherwise). */
  active(): boolean;
  publish(stage: S, startedAt: number, items: number): void;
  /** Runs `fn` and publishes its wall time as `stage`. */
  time<T>(stage: S, items: number, fn: () => Promise<T>): Promise<T>;
  /** The synchronous form of `time`. */
  timeSync<T>(stage: S, items: number, fn: () => T): T;
}

/**
 * Stage timings published on a diagnostics channel (`node:diagnostics_channel`), so a profiler
 * (a benchmark) can subscribe by name without the code it measures knowing about it. Nothing is
 * measured while nobody listens.
 */
export function stageChannel<S extends string>(name: string): StageChannel<S> {
  const ch = channel(name);
  const publish = (stage: S, startedAt: number, items: number) => {
    if (ch.hasSubscribers) ch.publish({ stage, ms: performance.now() - startedAt, items } satisfies StageTiming<S>);
  };
  return {
    active: () => ch.hasSubscribers,
    publish,
    async time(stage, items, fn) {
      if (!ch.hasSubscribers) return fn();
      const t = performance.now();
      try {
        return await fn();
      } finally {
        publish(stage, t, items);
      }
    },
    timeSync(stage, items, fn) {
      if (!ch.hasSubscribers) return fn();
      const t = performance.now();
      try {
        return fn();
      } finally {
        publish(stage, t, items);
      }
    },
  };
}
