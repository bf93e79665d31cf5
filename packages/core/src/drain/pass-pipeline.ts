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

/**
 * A pass's turn at the engine: taken before its first engine request (waiting while `width`
 * passes hold one), given back once its bulk is answered (its read-back and confirmation follow
 * without it), or when it ends. Taking twice waits once; giving twice gives once (a pass of
 * several collections takes it for the first; the others write after it, bounded by the passes
 * in flight).
 */
export interface EngineTurn {
  /** Resolves with the turn, or once `signal` aborts (the pass's deadline: its calls then fail at once). */
  take(signal?: AbortSignal): Promise<void>;
  give(): void;
}

/** `width` turns to share between the passes of a run. */
export class EngineTurns {
  private readonly waiting: (() => void)[] = [];

  constructor(private free: number) {}

  /** One pass's turn. */
  turn(): EngineTurn {
    let taken: Promise<void> | undefined;
    let given = false;
    return {
      take: (signal) => {
        taken ??= this.acquire();
        if (!signal) return taken;
        if (signal.aborted) return Promise.resolve();
        // A turn that comes after the deadline is given back as soon as it comes (see give).
        return Promise.race([taken, new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }))]);
      },
      give: () => {
        if (taken === undefined || given) return;
        given = true;
        void taken.then(() => this.release());
      },
    };
  }

  private acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

export interface PipelineOptions<R> {
  /** Passes at the engine at a time; one more may be in flight, its batch claimed and loaded ahead (each holds its own transaction, so one pooled connection). */
  width: number;
  /** Passes to start at most. */
  maxPasses: number;
  /** Whether a claim calls for another pass (it came back full). */
  full: (c: ClaimedBatch) => boolean;
  /** Whether a finished pass failed as a whole (no pass is started after one did). */
  failed: (r: R) => boolean;
  /** Checked before each start: true stops the run (the passes in flight finish). */
  stopping: () => boolean;
  /** Starts the `n`-th pass of the run (0 first), which takes its turn at the engine from `turn`. */
  start: (n: number, turn: EngineTurn) => StartedPass<R>;
  /** Each pass's result, as it finishes. */
  onResult?: (r: R) => void;
}

/**
 * Runs drain passes one batch ahead: `width` passes take turns at the engine (pre-read, bulk)
 * while one more claims and loads its batch (Postgres), started once the pass before it came
 * back full and has its batch loaded; it waits, loaded, for the first turn given back, so the
 * engine's writes do not wait for Postgres between batches. At most `width + 1` passes are in flight;
 * each is a whole pass of its own (its own transaction, claim, confirmation and deadline), so a
 * pass started ahead changes nothing a pass guarantees. The run ends with the first pass that
 * comes back short (or fails), once every pass in flight has finished; it resolves with the
 * results in the order the passes finished.
 */
export async function runPipeline<R>(o: PipelineOptions<R>): Promise<R[]> {
  const turns = new EngineTurns(o.width);
  const inFlight = new Set<Promise<R>>();
  const results: R[] = [];
  for (let n = 0; n < o.maxPasses && !o.stopping(); n++) {
    const pass = o.start(n, turns.turn());
    const done: Promise<R> = pass.done.then((r) => {
      inFlight.delete(done);
      results.push(r);
      o.onResult?.(r);
      return r;
    });
    inFlight.add(done);
    if (!o.full(await pass.loaded)) break;
    while (inFlight.size > o.width) await Promise.race(inFlight);
    if (results.some(o.failed)) break;
  }
  await Promise.all(inFlight);
  return results;
}
