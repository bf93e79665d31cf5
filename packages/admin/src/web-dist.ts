import { fileURLToPath } from "node:url";

/** Where `vite build` puts the page: web-dist/ beside src/ and dist/ (from either, one level up). */
export const WEB_DIST = fileURLToPath(new URL("../web-dist/", import.meta.url));
