import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it, expect, beforeAll, afterAll } from "vitest";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const promDir = join(repoRoot, "infra", "prometheus");
const rulesPath = join(promDir, "tether-rules.yml");
const rulesTestPath = join(promDir, "tether-rules.test.yml");

interface RunResult {
  status: number | null;
  output: string;
}

function run(command: string, args: string[], cwd = repoRoot): RunResult {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout: 600_000 });
  if (result.error) throw result.error;
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Copies the rules and their unit tests into a fresh directory, applying edits to each. */
function mutatedCopy(dir: string, edit: { rules?: (s: string) => string; tests?: (s: string) => string }): string {
  const rules = readFileSync(rulesPath, "utf8");
  const tests = readFileSync(rulesTestPath, "utf8");
  const editedRules = edit.rules ? edit.rules(rules) : rules;
  const editedTests = edit.tests ? edit.tests(tests) : tests;
  // A mutation that does not change anything would make the negative test vacuous.
  expect(editedRules !== rules || editedTests !== tests).toBe(true);
  writeFileSync(join(dir, "tether-rules.yml"), editedRules);
  writeFileSync(join(dir, "tether-rules.test.yml"), editedTests);
  return join(dir, "tether-rules.test.yml");
}

describe("Tether Prometheus alerting rules", () => {
  let scratch: string;

  beforeAll(() => {
    const install = run("bash", ["scripts/install-prometheus"]);
    if (install.status !== 0) {
      throw new Error(`scripts/install-prometheus failed (exit ${install.status}):\n${install.output}`);
    }
    scratch = mkdtempSync(join(tmpdir(), "tether-prom-rules-"));
  }, 600_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("are accepted by promtool check rules", () => {
    const result = run("promtool", ["check", "rules", rulesPath]);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain("SUCCESS: 9 rules found");
  });

  it("pass their promtool unit tests", () => {
    const result = run("promtool", ["test", "rules", rulesTestPath]);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain("SUCCESS");
    expect(result.output).not.toContain("FAILED");
  });

  it("have a unit test where each alert fires and one where it stays silent", () => {
    const alerts = [...readFileSync(rulesPath, "utf8").matchAll(/^\s*- alert: (\w+)\s*$/gm)].map((m) => m[1]);
    expect(alerts).toEqual([
      "TetherCompletionRateLow",
      "TetherQueueLengthHigh",
      "TetherExpiredJobs",
      "TetherParkedJobs",
      "TetherOldestDueJobTooOld",
      "TetherQueueSampleStale",
      "TetherVerifyDriftFound",
      "TetherVerifyOverdue",
      "TetherRestoreDetected",
    ]);
    const cases = [
      ...readFileSync(rulesTestPath, "utf8").matchAll(/^\s*alertname: (\w+)\s*\n\s*exp_alerts:[ \t]*(\[\])?/gm),
    ].map((m) => ({ alert: m[1], silent: m[2] === "[]" }));
    for (const alert of alerts) {
      expect(cases, `${alert} firing case`).toContainEqual({ alert, silent: false });
      expect(cases, `${alert} silent case`).toContainEqual({ alert, silent: true });
    }
  });

  it("make promtool test rules fail when an expected label is changed", () => {
    const testFile = mutatedCopy(scratch, {
      tests: (s) => s.replace("severity: critical", "severity: page"),
    });
    const result = run("promtool", ["test", "rules", testFile], scratch);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("FAILED");
    expect(result.output).toContain('severity="page"');
  });

  it("make promtool test rules fail when the queue-length alert stops excluding reindex tags", () => {
    const testFile = mutatedCopy(scratch, {
      rules: (s) => s.replace('tether_queue_length{tag!~"reindex.*|fanout:.*"}', 'tether_queue_length{tag!~"fanout:.*"}'),
    });
    const result = run("promtool", ["test", "rules", testFile], scratch);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("FAILED");
    expect(result.output).toContain("queue length high ignores a reindex flood");
  });

  it("make promtool test rules fail when the verify-overdue alert stops counting a collection that never completed a run", () => {
    const testFile = mutatedCopy(scratch, {
      rules: (s) => s.replace('\n              or tether_verify_scheduled_since_timestamp_seconds{mode="fast"}', ""),
    });
    const result = run("promtool", ["test", "rules", testFile], scratch);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("FAILED");
    expect(result.output).toContain("verify overdue fires for a collection that never completed a run");
  });

  it("make promtool test rules fail when the restore alert stops counting documents ahead of their rows", () => {
    const testFile = mutatedCopy(scratch, {
      rules: (s) => s.replace("\n            or max by (collection) (tether_restore_documents_ahead) > 100", ""),
    });
    const result = run("promtool", ["test", "rules", testFile], scratch);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("FAILED");
    expect(result.output).toContain("restore detected fires on many documents ahead of their rows");
  });

  it("make promtool test rules fail when the queue-length alert stops excluding fan-out tags", () => {
    const testFile = mutatedCopy(scratch, {
      rules: (s) => s.replace('tether_queue_length{tag!~"reindex.*|fanout:.*"}', 'tether_queue_length{tag!~"reindex.*"}'),
    });
    const result = run("promtool", ["test", "rules", testFile], scratch);
    expect(result.status).not.toBe(0);
    expect(result.output).toContain("FAILED");
    expect(result.output).toContain("queue length high ignores a fan-out backlog");
  });

  it("are embedded unchanged in the Kubernetes PrometheusRule and the rest of infra/ validates", () => {
    const result = run("bash", ["scripts/check-infra"]);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain("PASS: infra/k8s/prometheus-rules.yaml spec is identical to infra/prometheus/tether-rules.yml");
    expect(result.output).toContain("check-infra: all checks passed");
  });
});
