/**
 * Polls `condition` until it holds or the deadline passes (then throws naming `what`).
 * For conditions no event signals (a document appearing in another process's index).
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  opts: { what: string; timeoutMs?: number; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
