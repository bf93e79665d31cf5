import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALERT_NAMES } from "@tether/core/internal";
import { createTestContext, type TestContext } from "@tether/testkit";
import { runCli } from "./support/run-cli.js";

describe("tether alerts", () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext();
    const migrate = await runCli(ctx, ["migrate"]);
    expect(migrate.code, migrate.stderr).toBe(0);
  });
  afterAll(() => ctx.close());

  it("--help names every alert, from core's list; the report evaluates exactly those", async () => {
    expect(ALERT_NAMES).toHaveLength(8);
    const help = await runCli(ctx, ["alerts", "--help"]);
    expect(help.code, help.stderr).toBe(0);
    for (const name of ALERT_NAMES) expect(help.stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
    expect(help.stdout).toContain("Alerts (8;");
    // The list is the one the evaluation reports, in its order: a new alert shows in the help.
    const report = await runCli(ctx, ["alerts", "--json"]);
    expect([0, 1], report.stderr).toContain(report.code);
    expect((JSON.parse(report.stdout) as { alerts: { name: string }[] }).alerts.map((a) => a.name)).toEqual(ALERT_NAMES);
  });
});
