import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

describe("compiled migrations", () => {
  it("match the .sql files they were compiled from", () => {
    const script = fileURLToPath(new URL("../scripts/compile-migrations.mjs", import.meta.url));
    expect(() => execFileSync(process.execPath, [script, "--check"], { stdio: "pipe" })).not.toThrow();
  });
});
