/**
 * Polls `condition` until it returns something other than `false` or `undefined`, and resolves
 * with that value; throws naming `what` (and the last error seen) once the deadline passes.
 * For conditions no event signals (a document appearing in another process's index, a scrape).
 * `ignoreErrors` keeps polling through failures (a server still starting).
 *
 * @example
 * await waitFor(async () => (await count()) === 3, { what: "three documents" });
 * const parked = await waitFor(() => query("max(tether_jobs_parked)"), { what: "a scrape", ignoreErrors: true });
 */
export async function waitFor<T>(
  condition: () => T | false | undefined | Promise<T | false | undefined>,
  opts: { what: string; timeoutMs?: number; intervalMs?: number; ignoreErrors?: boolean },
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await condition();
      if (v !== false && v !== undefined) return v;
    } catch (err) {
      if (!opts.ignoreErrors) throw err;
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what}${lastError ? ` (last error: ${String(lastError)})` : ""}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}

/**
 * Polls a count (jobs left, writes done) until `done` says it is finished, and fails only when
 * the count has not moved for `stallMs`: a stuck queue fails, a slow machine does not (however
 * long the whole takes, it keeps going while the count moves). Resolves with the last count.
 *
 * @example
 * await waitForProgress(() => countJobs(db), (n) => n === 0, { what: "the queue to drain" });
 */
export async function waitForProgress(
  measure: () => number | Promise<number>,
  done: (n: number) => boolean,
  opts: { what: string; stallMs?: number; intervalMs?: number },
): Promise<number> {
  const stallMs = opts.stallMs ?? 120_000;
  let last = await measure();
  let movedAt = Date.now();
  while (!done(last)) {
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
    const n = await measure();
    if (n !== last) {
      last = n;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stallMs) {
      throw new Error(`no progress for ${stallMs} ms waiting for ${opts.what} (stuck at ${n})`);
    }
  }
  return last;
}
