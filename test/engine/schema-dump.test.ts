import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "@tether/testkit";

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext({ poolSize: 1 });
});
afterAll(() => ctx.close());

describe("the committed schema dump", () => {
  it("matches the schema the migrations build", () => {
    const script = fileURLToPath(new URL("../../packages/core/scripts/dump-schema.sh", import.meta.url));
    let failure = "";
    try {
      // Any database of the server does: the script migrates a fresh one of its own and drops it.
      execFileSync("bash", [script, "--check"], { stdio: "pipe", env: { ...process.env, DATABASE_URL: ctx.databaseUrl } });
    } catch (err) {
      failure = String((err as { stderr?: Buffer }).stderr ?? err);
    }
    expect(failure).toBe("");
  });
});
