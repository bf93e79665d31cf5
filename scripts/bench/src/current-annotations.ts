import { plainAnnotations } from "./plain-annotations.js";
import { resetIndex, seedAnnotations } from "./annotation-data.js";
import { rawBulk, type BenchSink } from "./bench-engine.js";
import type { BenchDatabase, BenchScope } from "./bench-scope.js";

/** `n` annotation rows and their documents, current in the engine `--sink` chose (loaded by raw bulk, refreshed). */
export async function currentAnnotations(scope: BenchScope, n: number): Promise<{ d: BenchDatabase; sink: BenchSink }> {
  const d = await scope.database();
  const sink = scope.engineSink();
  await seedAnnotations(d.db, n);
  await resetIndex(sink, plainAnnotations.index);
  const loaded = await rawBulk(sink, plainAnnotations.index, d.db);
  if (loaded.docs !== n) throw new Error(`loaded ${loaded.docs}/${n} documents`);
  await sink.refreshIndex(plainAnnotations.index);
  return { d, sink };
}
