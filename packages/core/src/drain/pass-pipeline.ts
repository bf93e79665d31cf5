/** What a pass claimed, told once its batch is loaded (its engine work begins) or once it ended. */
export interface ClaimedBatch {
  claimed: number;
  expired: number;
}

/** A pass the pipeline started. */
export interface StartedPass<R> {
  /** Resolves once the pass has claimed and loaded its batch, or has ended without getting there. */
  loaded: Promise<ClaimedBatch>;
  done: Promise<R>;
}

export interface PipelineOptions<R> {
  /** Passes in flight at most (each holds its own transaction, so one pooled connection). */
  width: number;
  /** Passes to start at most. */
  maxPasses: number;
  /** Whether a claim calls for another pass (it came back full). */
  full: (c: ClaimedBatch) => boolean;
  /** Whether a finished pass failed as a whole (no pass is started after one did). */
  failed: (r: R) => boolean;
  /** Checked before each start: true stops the run (the passes in flight finish). */
  stopping: () => boolean;
  /** Starts the `n`-th pass of the run (0 first). */
  start: (n: number) => StartedPass<R>;
  /** Each pass's result, as it finishes. */
  onResult?: (r: R) => void;
}

/**
 * Runs drain passes one batch ahead of each other: the next pass starts once the one before it
 * came back full and has its batch loaded, so its claim and row load (Postgres) run while the
 * passes before it wait on the engine (bulk, read-back). At most `width` passes are in flight;
 * each is a whole pass of its own (its own transaction, claim, confirmation and deadline), so a
 * pass started ahead changes nothing a pass guarantees. The run ends with the first pass that
 * comes back short (or fails), once every pass in flight has finished; it resolves with the
 * results in the order the passes finished.
 */
export async function runPipeline<R>(o: PipelineOptions<R>): Promise<R[]> {
  const inFlight = new Set<Promise<R>>();
  const results: R[] = [];
  for (let n = 0; n < o.maxPasses && !o.stopping(); n++) {
    const pass = o.start(n);
    const done: Promise<R> = pass.done.then((r) => {
      inFlight.delete(done);
      results.push(r);
      o.onResult?.(r);
      return r;
    });
    inFlight.add(done);
    if (!o.full(await pass.loaded)) break;
    while (inFlight.size >= o.width) await Promise.race(inFlight);
    if (results.some(o.failed)) break;
  }
  await Promise.all(inFlight);
  return results;
}
