import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CircuitBreaker, createWriter, Drainer, type BreakerState } from "@tether/core";
import { startFaultProxy, waitFor, type FaultProxy } from "@tether/testkit";
import { createWidgetContext, widgets, type WidgetContext } from "../support/widgets.js";

describe("the direct sync's circuit breaker", () => {
  let ctx: WidgetContext;
  let proxy: FaultProxy;
  beforeAll(async () => {
    ctx = await createWidgetContext();
    proxy = await startFaultProxy({ target: ctx.downstreamUrl });
  });
  afterAll(async () => {
    await proxy?.close();
    await ctx?.close();
  });

  it("opens after consecutive timeouts so later writes skip the hanging engine, probes after the cool-down, and closes when it answers; nothing is lost", async () => {
    const changes: BreakerState[] = [];
    const logger = {
      info: (o: { breaker?: BreakerState }) => void (o.breaker && changes.push(o.breaker)),
      warn: (o: { breaker?: BreakerState }) => void (o.breaker && changes.push(o.breaker)),
      error: () => undefined,
      debug: () => undefined,
    };
    const writer = createWriter({ sink: ctx.sinkAt(proxy.url), directSyncTimeoutMs: 300, graceMs: 0, logger: logger as never, breaker: { failures: 3, cooldownMs: 60_000 } });
    await proxy.setMode("hang");
    proxy.resetStats();

    const outcomes: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await writer.createWithJob(ctx.db, widgets, { owner: "breaker", title: `w${i}` });
      outcomes.push(r.sync);
      ids.push(r.changes[0]!.id);
    }
    // Only the writes before it opened paid the timeout; the others never reached the engine.
    expect(outcomes).toEqual(["timeout", "timeout", "timeout", "breaker_open", "breaker_open", "breaker_open", "breaker_open", "breaker_open"]);
    expect(proxy.stats.requests).toBe(3);
    expect(writer.breaker()).toMatchObject({ state: "open", consecutiveFailures: 3, opened: 1 });
    expect(changes).toEqual(["open"]);

    // The engine answers again; after the cool-down one write probes and closes the breaker.
    await proxy.setMode("pass");
    const fast = createWriter({ sink: ctx.sinkAt(proxy.url), directSyncTimeoutMs: 5_000, graceMs: 0, logger: logger as never, breaker: { failures: 1, cooldownMs: 1 } });
    await proxy.setMode("hang");
    const opened = await fast.createWithJob(ctx.db, widgets, { owner: "breaker", title: "opens" });
    await proxy.setMode("pass");
    ids.push(opened.changes[0]!.id);
    expect(fast.breaker()?.state).toBe("open");
    const probe = await waitFor(
      async () => {
        const r = await fast.createWithJob(ctx.db, widgets, { owner: "breaker", title: "probe" });
        ids.push(r.changes[0]!.id);
        return r.sync === "ok" ? r : undefined;
      },
      { what: "a probe after the cool-down to succeed" },
    );
    expect(probe.sync).toBe("ok");
    expect(fast.breaker()).toMatchObject({ state: "closed", consecutiveFailures: 0 });
    expect(changes.slice(1)).toEqual(["open", "half_open", "closed"]);

    // Every write's job is still there; the drainer makes the index whole.
    const drainer = new Drainer({ db: ctx.db, sink: ctx.sink, collections: [widgets] });
    for (let r = await drainer.drainOnce(); r.claimed > 0; r = await drainer.drainOnce());
    const states = await ctx.sink.fetchStates("widgets", ids);
    expect(ids.filter((id) => !states.get(id) || states.get(id)!.deleted)).toEqual([]);
  });

  it("a probe that fails opens it again for another cool-down", async () => {
    let now = 0;
    const seen: string[] = [];
    const b = new CircuitBreaker({ failures: 2, cooldownMs: 100, now: () => now, onStateChange: (c) => seen.push(c.to) });
    expect(b.tryAcquire()).toBe(true);
    b.record("failure");
    expect(b.tryAcquire()).toBe(true);
    b.record("failure");
    expect(b.tryAcquire()).toBe(false);
    now = 100;
    expect(b.tryAcquire()).toBe(true); // the probe
    expect(b.tryAcquire()).toBe(false); // only one at a time
    b.record("failure");
    expect(b.snapshot()).toMatchObject({ state: "open", opened: 2 });
    now = 150;
    expect(b.tryAcquire()).toBe(false);
    now = 200;
    expect(b.tryAcquire()).toBe(true);
    b.record("ok");
    expect(seen).toEqual(["open", "half_open", "open", "half_open", "closed"]);
    expect(() => new CircuitBreaker({ failures: 0 })).toThrow(/breaker.failures/);
  });
});
