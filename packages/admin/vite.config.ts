import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The console page: built into web-dist/ (shipped with the package, served by the plugin).
// Relative base: the plugin may be mounted under any prefix.
export default defineConfig({
  root: fileURLToPath(new URL("./web", import.meta.url)),
  base: "./",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("./web-dist", import.meta.url)),
    emptyOutDir: true,
    // No inline module-preload polyfill: the Content-Security-Policy allows no inline script.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: "es2022",
  },
});
