import { enableCapture } from "@tether/core";
import { annotations } from "@tether/annotations";
import type { Benchmark } from "../benchmark.js";
import { callerTransaction } from "../fanout/caller-transaction.js";
import { drainerMemory, memoryBase } from "../fanout/drainer-memory.js";
import { expansionRate } from "../fanout/expansion-rate.js";
import { BIG_AUTHOR, seedAuthor, SMALL_AUTHOR, SMALL_FANOUT } from "../fanout/fanout-authors.js";
import { timeToRight } from "../fanout/time-to-right.js";

/**
 * What a change that fans out costs, by size (issue #31): an author's rename reaching N
 * annotation documents through the annotation collection's author embed, against one reaching
 * 10, a raw INSERT … SELECT of the same jobs, a re-index of the same documents, and a fan-out of
 * a tenth the size.
 */
export const fanout: Benchmark = {
  name: "fanout",
  title: "A change of an embedded row that fans out to N documents: the caller's transaction, the expansion, time until right, the drainer's memory",
  async run(scope) {
    const n = scope.sizes.fanoutDocs;
    const d = await scope.database();
    await seedAuthor(d.db, BIG_AUTHOR, n);
    await seedAuthor(d.db, SMALL_AUTHOR, SMALL_FANOUT);
    await enableCapture(d.db, annotations);
    const caller = await callerTransaction(scope, d, n);
    const expansion = await expansionRate(scope, d, n);
    const right = await timeToRight(scope, d, scope.engineSink(), n);
    const memory = await drainerMemory(scope, memoryBase(n, scope.sizes.fanoutLargeDocs), scope.sizes.fanoutLargeDocs);
    return { rows: [...caller, ...expansion, ...right, ...memory.rows], info: { docs: n, smallFanout: SMALL_FANOUT, largeDocs: scope.sizes.fanoutLargeDocs, memoryDrains: memory.drains } };
  },
};
