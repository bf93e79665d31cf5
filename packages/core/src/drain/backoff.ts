export interface BackoffOptions {
  /** Delay after the first failure. Default 1000 ms. */
  baseMs?: number;
  /** Upper bound. Default 300000 ms (5 min). */
  maxMs?: number;
}

/**
 * Exponential backoff with full jitter in [0.5, 1.5) of the nominal delay, so drainers that
 * failed together do not retry together.
 */
export function backoffDelay(attempts: number, opts: BackoffOptions = {}, random: () => number = Math.random): number {
  const base = opts.baseMs ?? 1_000;
  const max = opts.maxMs ?? 300_000;
  const nominal = Math.min(max, base * 2 ** Math.min(attempts, 30));
  return Math.round(nominal * (0.5 + random()));
}
