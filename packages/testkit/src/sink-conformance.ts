import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentHash, entityHash, RetryableSinkError, type DownstreamState, type Sink, type SinkOperation } from "@tether/core";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.js";
import { withoutContent } from "./without-content.js";

/** How the conformance suite reaches a sink implementation. */
export interface SinkUnderTest {
  /** The engine's base URL (the suite puts fault proxies in front of it). */
  url: string;
  /** A sink talking to `url` whose index names all start with `indexPrefix`. */
  create(url: string, indexPrefix: string): Sink;
  /** Removes every index whose name starts with `indexPrefix`. */
  dropIndices(indexPrefix: string): Promise<void>;
}

const MAPPINGS = { properties: { title: { type: "text" }, count: { type: "long" } } };
const doc = (title: string, count = 1) => ({ title, count });
/** States without their content hashes (asserted on their own), by id. */
const plainStates = (states: ReadonlyMap<string, DownstreamState>) => Object.fromEntries(withoutContent(states));
const index = (id: string, version: number, title = `v${version}`, force = false): SinkOperation => ({ kind: "index", id, version, document: doc(title), ...(force ? { force } : {}) });

/**
 * The contract every `Sink` keeps, as tests against the real engine: realtime reads, external
 * versions, tombstones, deletes, per-item results classified (ok, conflict, retryable,
 * permanent), whole-request failures thrown as retryable, and the read-back that `tether
 * verify` relies on. A sink package runs it from its own tests:
 *
 * @example
 * describeSinkConformance("ElasticsearchSink", {
 *   url: inject("tetherElasticsearchUrl"),
 *   create: (url, indexPrefix) => new ElasticsearchSink({ client: url, indexPrefix }),
 *   dropIndices: (prefix) => dropIndicesAt(inject("tetherElasticsearchUrl"), prefix),
 * });
 */
export function describeSinkConformance(name: string, target: SinkUnderTest): void {
  describe(`${name} keeps the sink contract`, () => {
    const prefix = `conf${randomBytes(4).toString("hex")}_`;
    const opened: Sink[] = [];
    const proxies: FaultProxy[] = [];
    let sink: Sink;
    let n = 0;
    const open = (url = target.url) => {
      const s = target.create(url, prefix);
      opened.push(s);
      return s;
    };
    /** A fresh, created index per test: tests do not see each other's documents. */
    const freshIndex = async () => {
      const name = `c${++n}`;
      await sink.ensureIndex(name, MAPPINGS);
      return name;
    };
    const proxied = async () => {
      const proxy = await startFaultProxy({ target: target.url });
      proxies.push(proxy);
      return { proxy, sink: open(proxy.url) };
    };

    beforeAll(() => {
      sink = open();
    });
    afterAll(async () => {
      for (const p of proxies) await p.close();
      for (const s of opened) await s.close?.();
      await target.dropIndices(prefix);
    });

    it("creates its index idempotently, and reads nothing for ids it never wrote", async () => {
      const i = await freshIndex();
      await sink.ensureIndex(i, MAPPINGS);
      expect((await sink.fetchStates(i, ["1", "2"])).size).toBe(0);
      expect((await sink.fetchStates("never_created", ["1"])).size).toBe(0);
      expect((await sink.fetchStates(i, [])).size).toBe(0);
    });

    it("reads its own writes back at once, without a refresh (realtime)", async () => {
      const i = await freshIndex();
      expect(await sink.write(i, [index("1", 3), index("2", 1)])).toEqual([{ id: "1", status: "ok" }, { id: "2", status: "ok" }]);
      const states = await sink.fetchStates(i, ["1", "2", "3"]);
      expect(plainStates(states)).toEqual({ "1": { version: 3, deleted: false }, "2": { version: 1, deleted: false } });
    });

    it("stores any id the id rule allows as the document id, raw, and reads it back unchanged (up to 512 bytes of UTF-8)", async () => {
      const i = await freshIndex();
      const ids = ["jane.doe@example.com", "2024/0001", "HD 7", "Zoë 東京", " ", ".", "..", "_x", "%2F", "?q=1#x", "a\tb", "😀", `${"é".repeat(255)}ab`];
      const results = await sink.write(i, ids.map((id) => index(id, 3)));
      expect(results.map((r) => r.status)).toEqual(ids.map(() => "ok"));
      const states = await sink.fetchStates(i, ids);
      for (const id of ids) expect(states.get(id), id).toMatchObject({ version: 3, deleted: false });
      if (sink.scanDocuments) {
        await sink.refreshIndex?.(i);
        const scanned: string[] = [];
        for await (const page of sink.scanDocuments(i, {})) scanned.push(...page.map((d) => d.id));
        expect(scanned.sort()).toEqual([...ids].sort());
      }
    });

    it("never lets a write create an index: a missing one answers retryable naming `tether migrate`; provisionIndex creates it behind an alias that checkIndex reads back (when offered)", async () => {
      const name = `c${++n}_owned`;
      const results = await sink.write(name, [index("1", 1)]);
      expect(results).toEqual([{ id: "1", status: "retryable", error: expect.stringMatching(/does not exist: run `tether migrate`/) }]);
      expect(await sink.indexLayout?.(name)).toEqual(sink.indexLayout ? { kind: "missing" } : undefined);
      if (!sink.provisionIndex || !sink.checkIndex) return;
      expect(await sink.checkIndex(name, MAPPINGS)).toEqual({ kind: "missing" });
      expect(await sink.provisionIndex(name, MAPPINGS)).toEqual({ created: true });
      expect(await sink.provisionIndex(name, MAPPINGS)).toEqual({ created: false });
      expect(await sink.checkIndex(name, MAPPINGS)).toEqual({ kind: "present", layout: "alias", problems: [] });
      expect(await sink.write(name, [index("1", 1)])).toEqual([{ id: "1", status: "ok" }]);
      // A mapping declared since: a field the index lacks, one it maps otherwise.
      const declared = { properties: { ...MAPPINGS.properties, title: { type: "keyword" }, tags: { type: "keyword" } } };
      expect(await sink.checkIndex(name, declared)).toEqual({
        kind: "present",
        layout: "alias",
        problems: [
          { field: "title", declared: "keyword", actual: "text" },
          { field: "tags", declared: "keyword", actual: null },
        ],
      });
    });

    it("reads versions alone (when it offers fetchVersions) at once after a write, absent ids left out", async () => {
      if (!sink.fetchVersions) return;
      const i = await freshIndex();
      await sink.write(i, [index("1", 3), { kind: "tombstone", id: "2", version: 4 }]);
      expect(Object.fromEntries(await sink.fetchVersions(i, ["1", "2", "3"]))).toEqual({ "1": 3, "2": 4 });
      expect((await sink.fetchVersions("never_created", ["1"])).size).toBe(0);
    });

    it("reads each live document's content hash back with its state (when it records one): the hash of the body written, none for a tombstone", async () => {
      const i = await freshIndex();
      await sink.write(i, [index("1", 3, "first body"), { kind: "tombstone", id: "2", version: 4 }]);
      const states = await sink.fetchStates(i, ["1", "2"]);
      if (states.get("1")?.content === undefined) return;
      expect(states.get("1")!.content).toBe(contentHash(doc("first body")));
      expect(states.get("2")).not.toHaveProperty("content");
      // A forced rewrite at the same version with another body: the hash follows the body.
      await sink.write(i, [index("1", 3, "second body", true)]);
      expect((await sink.fetchStates(i, ["1"])).get("1")!.content).toBe(contentHash(doc("second body")));
    });

    it("reports the highest version its index holds, tombstones included (when it offers highestVersion), and nothing for an empty or missing index", async () => {
      if (!sink.highestVersion) return;
      const i = await freshIndex();
      expect(await sink.highestVersion(i)).toBeUndefined();
      // A search, not a realtime read: it sees what a refresh made visible.
      await sink.write(i, [index("1", 3), index("2", 9), { kind: "tombstone", id: "3", version: 12 }]);
      await sink.refreshIndex?.(i);
      expect(await sink.highestVersion(i)).toBe(12);
      await sink.write(i, [index("3", 40)]);
      await sink.refreshIndex?.(i);
      expect(await sink.highestVersion(i)).toBe(40);
      expect(await sink.highestVersion(`${i}_never_created`)).toBeUndefined();
    });

    it("never lets an older or equal version overwrite a newer one; force rewrites an equal version only", async () => {
      const i = await freshIndex();
      await sink.write(i, [index("1", 5)]);
      const [older] = await sink.write(i, [index("1", 4)]);
      expect(older).toMatchObject({ id: "1", status: "conflict" });
      if (older?.status === "conflict" && older.currentVersion !== undefined) expect(older.currentVersion).toBe(5);
      expect((await sink.write(i, [index("1", 5)]))[0]!.status).toBe("conflict");
      expect((await sink.write(i, [index("1", 5, "forced", true)]))[0]!.status).toBe("ok");
      expect((await sink.write(i, [index("1", 4, "forced older", true)]))[0]!.status).toBe("conflict");
      expect((await sink.write(i, [index("1", 6)]))[0]!.status).toBe("ok");
      expect((await sink.fetchStates(i, ["1"])).get("1")).toMatchObject({ version: 6, deleted: false });
    });

    it("keeps a tombstone against late writes of older versions, and lets a newer version revive the entity", async () => {
      const i = await freshIndex();
      await sink.write(i, [index("7", 2)]);
      expect(await sink.write(i, [{ kind: "tombstone", id: "7", version: 3 }])).toEqual([{ id: "7", status: "ok" }]);
      expect((await sink.fetchStates(i, ["7"])).get("7")).toEqual({ version: 3, deleted: true });
      expect((await sink.write(i, [index("7", 2, "late")]))[0]!.status).toBe("conflict");
      expect((await sink.fetchStates(i, ["7"])).get("7")).toEqual({ version: 3, deleted: true });
      await sink.write(i, [index("7", 4, "restored")]);
      expect((await sink.fetchStates(i, ["7"])).get("7")).toMatchObject({ version: 4, deleted: false });
    });

    it("purges only the tombstones older than the cutoff, counting them first in a dry run", async () => {
      expect(sink.purgeTombstones, "purgeTombstones").toBeDefined();
      const i = await freshIndex();
      await sink.write(i, [index("3", 1), index("5", 1)]);
      await sink.write(i, [{ kind: "tombstone", id: "1", version: 3 }, { kind: "tombstone", id: "2", version: 2 }, { kind: "tombstone", id: "5", version: 2 }]);
      // "5" comes back to life after its delete: no longer a tombstone, never purged.
      await sink.write(i, [index("5", 3)]);
      const cutoff = Date.now() + 1;
      while (Date.now() <= cutoff) await new Promise((r) => setImmediate(r));
      await sink.write(i, [{ kind: "tombstone", id: "4", version: 1 }]);

      expect(await sink.purgeTombstones!(i, { before: cutoff, dryRun: true })).toEqual({ found: 2, purged: 0, skipped: 0 });
      expect((await sink.fetchStates(i, ["1", "2"])).size).toBe(2);
      expect(await sink.purgeTombstones!(i, { before: cutoff })).toEqual({ found: 2, purged: 2, skipped: 0 });
      expect(plainStates(await sink.fetchStates(i, ["1", "2", "3", "4", "5"]))).toEqual({
        "3": { version: 1, deleted: false },
        "4": { version: 1, deleted: true },
        "5": { version: 3, deleted: false },
      });
      expect(await sink.purgeTombstones!(i, { before: cutoff })).toEqual({ found: 0, purged: 0, skipped: 0 });
      expect(await sink.purgeTombstones!(`${i}_absent`, { before: cutoff })).toEqual({ found: 0, purged: 0, skipped: 0 });
    });

    it("removes a document only with a version above the stored one, and takes a delete of an absent one as done", async () => {
      const i = await freshIndex();
      await sink.write(i, [index("1", 4), index("2", 4)]);
      const results = await sink.write(i, [
        { kind: "delete", id: "1", version: 5 },
        { kind: "delete", id: "2", version: 3 },
        { kind: "delete", id: "3", version: 1 },
      ]);
      expect(results.map((r) => [r.id, r.status])).toEqual([["1", "ok"], ["2", "conflict"], ["3", "ok"]]);
      expect(plainStates(await sink.fetchStates(i, ["1", "2", "3"]))).toEqual({ "2": { version: 4, deleted: false } });
    });

    it("classifies a document its mapping refuses as permanent without failing the other items of the bulk", async () => {
      const i = await freshIndex();
      const results = await sink.write(i, [index("1", 1), { kind: "index", id: "2", version: 1, document: { count: "not a number" } }, index("3", 1)]);
      expect(results.map((r) => [r.id, r.status])).toEqual([["1", "ok"], ["2", "permanent"], ["3", "ok"]]);
      expect(results[1]).toMatchObject({ error: expect.stringContaining("400") });
      expect([...(await sink.fetchStates(i, ["1", "2", "3"])).keys()].sort()).toEqual(["1", "3"]);
    });

    it("classifies an item missing from a 200 answer as retryable, and an item reported written but never stored shows on read-back", async () => {
      const i = await freshIndex();
      const { proxy, sink: lossy } = await proxied();
      await proxy.dropBulkItems(1);
      const results = await lossy.write(i, [index("1", 1), index("2", 1)]);
      expect(results).toEqual([
        { id: "1", status: "retryable", error: expect.any(String) },
        { id: "2", status: "retryable", error: expect.any(String) },
      ]);
      await proxy.dropBulkItems(1, { forge: true });
      expect((await lossy.write(i, [index("3", 1)]))[0]!.status).toBe("ok");
      // Only reading back tells the truth.
      expect((await sink.fetchStates(i, ["1", "2", "3"])).size).toBe(0);
    });

    it("throws a retryable error when the engine is unreachable or overloaded, for reads and writes alike", async () => {
      const i = await freshIndex();
      const { proxy, sink: flaky } = await proxied();
      for (const mode of ["refuse", "503", "429"] as const) {
        await proxy.setMode(mode);
        await expect(flaky.fetchStates(i, ["1"], { retries: 0 })).rejects.toBeInstanceOf(RetryableSinkError);
        await expect(flaky.write(i, [index("1", 1)], { retries: 0 })).rejects.toBeInstanceOf(RetryableSinkError);
      }
      await proxy.setMode("hang");
      await expect(flaky.fetchStates(i, ["1"], { retries: 0, timeoutMs: 300 })).rejects.toBeInstanceOf(RetryableSinkError);
      const ac = new AbortController();
      const pending = flaky.write(i, [index("1", 1)], { signal: ac.signal, retries: 0 });
      ac.abort(new Error("deadline"));
      await expect(pending).rejects.toBeInstanceOf(RetryableSinkError);
    });

    it("splits a bulk the engine refuses as too large (413) until each item stands alone", async () => {
      const i = await freshIndex();
      const { proxy, sink: small } = await proxied();
      await proxy.setMode({ kind: "status", status: 413 });
      const results = await small.write(i, [index("1", 1), index("2", 1), index("3", 1)], { retries: 0 });
      expect(results.map((r) => [r.id, r.status])).toEqual([["1", "permanent"], ["2", "permanent"], ["3", "permanent"]]);
      // 1 whole request, then [1,2] and [3], then [1] and [2]: five attempts in all.
      expect(proxy.stats.statuses[413]).toBe(5);
    });

    it("points a name at one index atomically (the rebuild's aliases, when offered), keeping a concrete index of that name under another", async () => {
      if (!sink.indexLayout || !sink.swapAlias || !sink.deleteIndex) return;
      const live = await freshIndex();
      const next = `${live}_next`;
      const kept = `${live}_kept`;
      await sink.write(live, [index("1", 1)]);
      await sink.ensureIndex(next, MAPPINGS);
      await sink.write(next, [index("2", 1)]);
      expect(await sink.indexLayout(live)).toEqual({ kind: "index" });
      expect(await sink.indexLayout(`${live}_never`)).toEqual({ kind: "missing" });

      await sink.swapAlias(live, next, { keepAs: kept });
      expect(await sink.indexLayout(live)).toEqual({ kind: "alias", indices: [next] });
      expect([...(await sink.fetchStates(live, ["1", "2"])).keys()]).toEqual(["2"]);
      // Writes through the name land in the index it points at; the kept copy takes writes again.
      await sink.write(live, [index("3", 1)]);
      expect((await sink.fetchStates(next, ["3"])).size).toBe(1);
      expect(await sink.write(kept, [index("1", 2)])).toEqual([{ id: "1", status: "ok" }]);
      // A process starting later ensures the index by its name: the alias is that index existing.
      await sink.ensureIndex(live, MAPPINGS);

      await sink.swapAlias(live, kept);
      expect(await sink.indexLayout(live)).toEqual({ kind: "alias", indices: [kept] });
      expect(plainStates(await sink.fetchStates(live, ["1", "3"]))).toEqual({ "1": { version: 2, deleted: false } });
      await expect(sink.deleteIndex(live)).rejects.toThrow(/alias/);
      await sink.deleteIndex(next);
      await sink.deleteIndex(next);
      expect(await sink.indexLayout(next)).toEqual({ kind: "missing" });
    });

    it("summarizes live documents per id bucket and lists every state in a range, tombstones included", async () => {
      const i = await freshIndex();
      await sink.write(i, [index("1", 2), index("2", 3), index("15", 1), { kind: "tombstone", id: "3", version: 4 }, index("25", 7)]);
      await sink.refreshIndex?.(i);
      const [low, high, empty] = await sink.summarize(i, [{ from: 0n, to: 10n }, { from: 10n, to: 30n }, { from: 30n, to: 40n }]);
      expect(low).toMatchObject({ count: 2, hashSum: entityHash("1", 2) + entityHash("2", 3) });
      expect(high).toMatchObject({ count: 2, hashSum: entityHash("15", 1) + entityHash("25", 7) });
      expect(empty).toMatchObject({ count: 0, hashSum: 0 });
      if (low?.versionSum !== undefined) expect(low.versionSum).toBe(5);
      const listed = await sink.listStates(i, { from: 0n, to: 20n });
      expect(Object.fromEntries(listed)).toEqual({
        "1": { version: 2, deleted: false },
        "2": { version: 3, deleted: false },
        "3": { version: 4, deleted: true },
        "15": { version: 1, deleted: false },
      });
      if (sink.scanDocuments) {
        // A scheduled deep run reads one key range at a time: the documents whose key lies in it, tombstones included.
        const scanned: string[] = [];
        for await (const page of sink.scanDocuments(i, { range: { from: 2n, to: 20n }, pageSize: 2 })) scanned.push(...page.map((d) => d.id));
        expect(scanned.sort()).toEqual(["15", "2", "3"]);
      }
    });

    it("compares id buckets exactly past 2^53, up to the largest bigint", async () => {
      const i = await freshIndex();
      // 2^53 + 1 is the first integer a double cannot hold: it would round to 2^53.
      const ids = ["9007199254740992", "9007199254740993", "9223372036854775806", "9223372036854775807"];
      await sink.write(i, ids.map((id, k) => index(id, k + 1)));
      await sink.refreshIndex?.(i);
      const two53 = 2n ** 53n;
      const top = 2n ** 63n;
      const sums = await sink.summarize(i, [
        { from: two53, to: two53 + 1n },
        { from: two53 + 1n, to: two53 + 2n },
        { from: two53 + 2n, to: top - 1n },
        { from: top - 1n, to: top },
      ]);
      expect(sums.map((b) => b.count)).toEqual([1, 1, 1, 1]);
      expect(sums.map((b) => b.hashSum)).toEqual(ids.map((id, k) => entityHash(id, k + 1)));
      if (sums[1]?.versionSum !== undefined) expect(sums.map((b) => b.versionSum)).toEqual([1, 2, 3, 4]);
      expect(Object.fromEntries(await sink.listStates(i, { from: two53 + 1n, to: two53 + 2n }))).toEqual({ "9007199254740993": { version: 2, deleted: false } });
      expect(Object.fromEntries(await sink.listStates(i, { from: top - 1n, to: top }))).toEqual({ "9223372036854775807": { version: 4, deleted: false } });
    });
  });
}
