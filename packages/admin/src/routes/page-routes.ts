import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { AdminApp } from "../admin-context.js";

/** Where `vite build` puts the page (web-dist/ beside src/ and dist/). */
export const WEB_DIST = fileURLToPath(new URL("../../web-dist/", import.meta.url));

/** The console page and its hashed assets. Public: they hold no data; every read needs a session. */
export async function pageRoutes(app: AdminApp): Promise<void> {
  const indexFile = `${WEB_DIST}index.html`;
  const built = existsSync(indexFile);
  const html = built ? readFileSync(indexFile, "utf8") : undefined;

  app.get("/", { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    // Relative asset URLs need the trailing slash.
    if (!request.url.split("?")[0]!.endsWith("/")) return reply.redirect(`${request.url.split("?")[0]}/`, 301);
    if (!html) {
      return reply.status(503).type("text/plain").send("The console's page is not built: run `pnpm --filter @tether/admin build:web` (the JSON API works without it).");
    }
    return reply.type("text/html; charset=utf-8").header("cache-control", "no-store").send(html);
  });

  if (built) {
    await app.register(fastifyStatic, {
      root: `${WEB_DIST}assets`,
      prefix: "/assets/",
      decorateReply: false,
      index: false,
      // Hashed file names: cache for good.
      immutable: true,
      maxAge: "365d",
    });
  }
}
