import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminTestApp, type AdminTestApp } from "./support/admin-test-app.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));

describe("the console's page", () => {
  let dir: string;
  let built: AdminTestApp;
  let missing: AdminTestApp;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tether-web-dist-"));
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.html"), "<!doctype html><title>console</title>");
    writeFileSync(join(dir, "assets", "main-abc123.js"), "console.log(1)");
    built = await createAdminTestApp({ webDist: dir });
    missing = await createAdminTestApp({ webDist: join(dir, "nowhere") });
  });
  afterAll(async () => {
    await built?.close();
    await missing?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the built page and its hashed assets without a session", async () => {
    const page = await built.app.inject({ method: "GET", url: "/admin/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    expect(page.body).toContain("<title>console</title>");
    const asset = await built.app.inject({ method: "GET", url: "/admin/assets/main-abc123.js" });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["cache-control"]).toContain("immutable");
    expect((await built.app.inject({ method: "GET", url: "/admin" })).statusCode).toBe(301);
  });

  it("answers the JSON error contract, naming the command that builds it, when the page is not built", async () => {
    const res = await missing.app.inject({ method: "GET", url: "/admin/" });
    expect(res.statusCode).toBe(503);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: "service_unavailable", message: expect.stringContaining("scripts/bootstrap") });
    const asset = await missing.app.inject({ method: "GET", url: "/admin/assets/main-abc123.js" });
    expect(asset.statusCode).toBe(404);
    expect(asset.json()).toMatchObject({ error: "not_found" });
    // The JSON API does not need the page.
    expect((await missing.app.inject({ method: "GET", url: "/admin/openapi.json" })).statusCode).toBe(200);
  });

  it("is built by scripts/bootstrap and before the admin package is packed", () => {
    const bootstrap = readFileSync(join(repo, "scripts", "bootstrap"), "utf8");
    expect(bootstrap).toMatch(/^pnpm --filter @tether\/admin build:web/m);
    const pkg = JSON.parse(readFileSync(join(repo, "packages", "admin", "package.json"), "utf8")) as { scripts: Record<string, string>; files: string[] };
    expect(pkg.scripts.prepack).toBe("pnpm run build");
    expect(pkg.scripts.build).toContain("scripts/build-web.mjs");
    expect(pkg.files).toContain("web-dist");
  });
});
