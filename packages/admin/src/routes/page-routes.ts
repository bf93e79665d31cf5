import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { Type } from "typebox";
import { sendErrorBody } from "@tether/service-kit";
import type { AdminApp } from "../admin-context.js";

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".map": "application/json",
};

/** The built files, read once: a handful of small hashed assets. */
function loadAssets(webDist: string): Map<string, { body: Buffer; type: string }> {
  const dir = join(webDist, "assets");
  const out = new Map<string, { body: Buffer; type: string }>();
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) out.set(name, { body: readFileSync(join(dir, name)), type: TYPES[extname(name)] ?? "application/octet-stream" });
  return out;
}

/** The console page and its hashed assets. Public: they hold no data; every read needs a session. */
export async function pageRoutes(app: AdminApp, webDist: string): Promise<void> {
  const indexFile = join(webDist, "index.html");
  const html = existsSync(indexFile) ? readFileSync(indexFile, "utf8") : undefined;
  const assets = loadAssets(webDist);

  app.get("/", { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    // Relative asset URLs need the trailing slash.
    const path = request.url.split("?")[0]!;
    if (!path.endsWith("/")) return reply.redirect(`${path}/`, 301);
    if (!html) {
      // The one error contract, like every other answer of the plugin: a client (or a health
      // probe) reads the same JSON whatever went wrong.
      return sendErrorBody(reply, 503, {
        error: "service_unavailable",
        message: "the console's page is not built: run `scripts/bootstrap` or `pnpm --filter @tether/admin build:web` (the JSON API works without it)",
      });
    }
    return reply.type("text/html; charset=utf-8").header("cache-control", "no-store").send(html);
  });

  app.get("/assets/:file", { config: { public: true }, schema: { hide: true, params: Type.Object({ file: Type.String({ pattern: "^[A-Za-z0-9_.-]{1,200}$" }) }) } }, async (request, reply) => {
    const asset = assets.get(request.params.file);
    if (!asset) return reply.status(404).send({ error: "not_found", message: `no asset ${request.params.file}` });
    // Hashed file names: a changed file is a new name, so cache for good.
    return reply.type(asset.type).header("cache-control", "public, max-age=31536000, immutable").send(asset.body);
  });
}
