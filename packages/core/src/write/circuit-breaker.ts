import { ValidationError } from "../errors.js";

/** closed: direct syncs run; open: none is attempted until the cool-down ends; half_open: one probe runs. */
export type BreakerState = "closed" | "open" | "half_open";

export interface CircuitBreakerOptions {
  /** Consecutive failed or timed-out direct syncs that open the breaker. Default 5. */
  failures?: number;
  /** How long the breaker stays open before one probe is let through. Default 5000 ms. */
  cooldownMs?: number;
  /** Told once per state change (the writer logs it and counts it). */
  onStateChange?: (change: { from: BreakerState; to: BreakerState; consecutiveFailures: number }) => void;
  /** The clock. Default `Date.now`. */
  now?: () => number;
}

export interface BreakerSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  /** When it last opened (epoch ms), while open or half-open. */
  openedAt?: number;
  /** Times it opened since start. */
  opened: number;
}

/**
 * The direct sync's circuit breaker. After `failures` consecutive failures or timeouts it opens:
 * writes skip the direct sync (their jobs are already committed; the drainer does the work)
 * instead of each paying the timeout. After `cooldownMs` one write probes (half-open); its
 * success closes the breaker, its failure opens it for another cool-down.
 *
 * @example
 * const breaker = new CircuitBreaker({ failures: 5, cooldownMs: 5000 });
 * if (breaker.tryAcquire()) breaker.record(await attempt()); // "ok" | "error" | "timeout"
 */
export class CircuitBreaker {
  private state: BreakerState = "closed";
  private consecutiveFailures = 0;
  private openedAt: number | undefined;
  private opened = 0;
  private probeInFlight = false;
  private readonly failures: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: CircuitBreakerOptions = {}) {
    this.failures = opts.failures ?? 5;
    this.cooldownMs = opts.cooldownMs ?? 5_000;
    this.now = opts.now ?? Date.now;
    if (!Number.isInteger(this.failures) || this.failures < 1) throw new ValidationError("breaker.failures", "must be a positive integer");
    if (!Number.isInteger(this.cooldownMs) || this.cooldownMs < 1) throw new ValidationError("breaker.cooldownMs", "must be a positive integer (milliseconds)");
  }

  /** Whether a direct sync may run now. In half-open state only the first caller (the probe) may. */
  tryAcquire(): boolean {
    if (this.state === "closed") return true;
    if (this.state === "open") {
      if (this.now() - (this.openedAt ?? 0) < this.cooldownMs) return false;
      this.move("half_open");
    }
    if (this.probeInFlight) return false;
    this.probeInFlight = true;
    return true;
  }

  /** The outcome of a direct sync `tryAcquire` let through. */
  record(outcome: "ok" | "failure"): void {
    const probe = this.state === "half_open";
    if (probe) this.probeInFlight = false;
    if (outcome === "ok") {
      this.consecutiveFailures = 0;
      if (this.state !== "closed") {
        this.openedAt = undefined;
        this.move("closed");
      }
      return;
    }
    this.consecutiveFailures += 1;
    if (probe || (this.state === "closed" && this.consecutiveFailures >= this.failures)) {
      this.openedAt = this.now();
      this.opened += 1;
      this.move("open");
    }
  }

  snapshot(): BreakerSnapshot {
    return { state: this.state, consecutiveFailures: this.consecutiveFailures, ...(this.openedAt !== undefined ? { openedAt: this.openedAt } : {}), opened: this.opened };
  }

  private move(to: BreakerState): void {
    const from = this.state;
    if (from === to) return;
    this.state = to;
    this.opts.onStateChange?.({ from, to, consecutiveFailures: this.consecutiveFailures });
  }
}
