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
