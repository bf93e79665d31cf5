/** @tether/annotations-api — the reference annotation service (write paths, search, admin). */
export { buildApp, type BuildAppOptions } from "./app.js";
export { loadEnv, type ApiEnv } from "./env.js";
