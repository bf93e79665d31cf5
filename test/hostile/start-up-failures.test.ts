import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { createTestContext } from "@tether/testkit";
import { closedPort } from "./support/closed-port.js";
import { runToExit, type Exited } from "./support/run-to-exit.js";

const PASSWORD = "Hunter2-s3cret";


/** One fatal JSON line, nothing on stderr (no stack trace), the password nowhere. */
function expectOneFatalLine(r: Exited): Record<string, unknown> {
  expect(r.stderr).toBe("");
  const lines = r.stdout.map((l) => JSON.parse(l) as Record<string, unknown>);
  const fatal = lines.filter((l) => l.level === 60);
  expect(fatal, r.stdout.join("\n")).toHaveLength(1);
  expect(r.stdout.join("\n")).not.toContain(PASSWORD);
  expect(r.stdout.join("\n")).not.toMatch(/\n\s+at /);
  return fatal[0]!;
}

describe("a service that cannot start says why in one JSON line and a documented exit code", () => {
  for (const kind of ["api", "drainer"] as const) {
    it(`${kind}: a malformed DATABASE_URL exits 78 naming the variable, its password withheld`, async () => {
      for (const url of [`postgres://tether:${PASSWORD}@db.internal:99999/tether`, `postgres://tether:${PASSWORD} x@db internal/tether`]) {
        const r = await runToExit(kind, { DATABASE_URL: url, ELASTICSEARCH_URL: "http://127.0.0.1:9" });
        expect(r.code, r.stdout.join("\n")).toBe(78);
        const line = expectOneFatalLine(r);
        expect(line.msg).toBe("invalid configuration: DATABASE_URL");
        expect(line.invalidEnv).toHaveProperty("DATABASE_URL");
        expect(r.stdout).toHaveLength(1);
      }
    });

    it(`${kind}: Postgres unreachable at start-up exits 69 with one JSON line instead of a stack trace`, async () => {
      const port = await closedPort();
      const r = await runToExit(kind, { DATABASE_URL: `postgres://tether:${PASSWORD}@127.0.0.1:${port}/tether`, ELASTICSEARCH_URL: "http://127.0.0.1:9" });
      expect(r.code, r.stdout.join("\n")).toBe(69);
      const line = expectOneFatalLine(r);
      expect(line.msg).toBe("start-up failed: Postgres is unreachable");
      expect(line.error).toMatchObject({ code: "ECONNREFUSED" });
      // The "starting" line shows where it tried, password masked.
      expect(r.stdout.join("\n")).toContain("tether:***@127.0.0.1");
    });
  }

  it("api: a port already in use exits 70 with one JSON line", async () => {
    const ctx = await createTestContext();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "0.0.0.0", resolve));
    try {
      const { port } = taken.address() as { port: number };
      const r = await runToExit("api", { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: "http://127.0.0.1:9", PORT: String(port) });
      expect(r.code, r.stdout.join("\n")).toBe(70);
      const line = expectOneFatalLine(r);
      expect(line.msg).toBe("start-up failed");
      expect(line.error).toMatchObject({ code: "EADDRINUSE" });
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
      await ctx.close();
    }
  });
});
