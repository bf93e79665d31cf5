import { describe, expect, it } from "vitest";
import { providedServices } from "@tether/testkit";
import { formatChurn } from "../../scripts/long-runs/src/churn-main.js";
import { runChurn } from "../../scripts/long-runs/src/churn-run.js";

describe("the churn run (scripts/churn), shortened to seconds", () => {
  it("takes every sample up to the end of the paced phase, each with the job table's figures, and compares the last with the first and the middle", async () => {
    const { serverUrl, engineUrl } = providedServices();
    // 6 s of paced churn in samples of 2 s: three samples, the last ending at 6 s.
    const report = await runChurn({ databaseUrl: serverUrl, elasticsearchUrl: engineUrl, minutes: 0.1, probeSeconds: 1, sampleSeconds: 2, rateFraction: 0.2, log: () => undefined });
    expect(report.samples).toHaveLength(3);
    expect(report.samples.at(-1)!.atSecond).toBeGreaterThanOrEqual(6);
    expect(report.targetWritesPerSecond).toBeCloseTo(report.maxWritesPerSecond * 0.2);
    for (const s of report.samples) {
      expect(s.failed).toBe(0);
      expect(s.writes).toBeGreaterThan(0);
      expect(s.jobHeapBytes).toBeGreaterThan(0);
      expect(s.jobIndexBytes).toBeGreaterThan(0);
      expect(s.jobLiveTuples + s.jobDeadTuples).toBeGreaterThan(0);
      expect(s.jobDeadTuplesPeak).toBeGreaterThanOrEqual(s.jobDeadTuples);
    }
    const table = formatChurn(report);
    expect(table).toContain("20% of the measured");
    expect(table).toMatch(/tether\.job heap \(bytes\)\s+\d+\s+\d+\s+\d+\s+[\d.]+×\s+(met|missed)\s+[\d.]+×/);
  });
});
