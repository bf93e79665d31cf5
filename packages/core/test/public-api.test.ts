import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as core from "../src/index.js";
import { apiReport } from "./api-report.js";

const at = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const reportFile = at("../etc/public-api.txt");

describe("@tether/core's public API", () => {
  it("matches the committed report (etc/public-api.txt); UPDATE_API_REPORT=1 rewrites it after an intended change", () => {
    const report = apiReport(at("../src/index.ts"), at("../tsconfig.json"));
    if (process.env.UPDATE_API_REPORT === "1" || !existsSync(reportFile)) writeFileSync(reportFile, report);
    expect(report, "the public API changed: review the diff, then run UPDATE_API_REPORT=1 pnpm exec vitest run packages/core/test/public-api.test.ts").toBe(
      readFileSync(reportFile, "utf8"),
    );
  });

  it("exports at run time exactly the values the report lists, and no internals", () => {
    const report = readFileSync(reportFile, "utf8");
    const values = [...report.matchAll(/^(?:class|function|const)(?: & \w+)? (\w+)$/gm)].map((m) => m[1]).sort();
    expect(Object.keys(core).sort()).toEqual(values);
    for (const internal of ["claimJobs", "parkJobs", "processBatch", "resetInstruments", "insertJobs", "sweepExpired"]) {
      expect(Object.keys(core)).not.toContain(internal);
    }
  });
});
