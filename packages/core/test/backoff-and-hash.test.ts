import { describe, expect, it } from "vitest";
import { backoffDelay, entityHash } from "../src/internal.js";

describe("backoff and hashes", () => {
  it("grows exponentially within the jitter band and stops at the cap", () => {
    expect(backoffDelay(0, { baseMs: 1000 }, () => 0)).toBe(500);
    expect(backoffDelay(3, { baseMs: 1000 }, () => 0.999)).toBeLessThan(12_000);
    expect(backoffDelay(3, { baseMs: 1000 }, () => 0)).toBe(4000);
    expect(backoffDelay(40, { baseMs: 1000, maxMs: 60_000 }, () => 0.5)).toBe(60_000);
  });

  it("hashes (id, version) into 28 bits, differently per version", () => {
    expect(entityHash("1", 1)).not.toBe(entityHash("1", 2));
    expect(entityHash("42", 7)).toBeLessThan(2 ** 28);
  });
});
