import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ConfigError } from "./config-error.js";
import type { LoadedConfig } from "./tether-config.js";
import { validateConfig } from "./validate-config.js";

/** Files looked for in the working directory when no path is given, in order. */
export const DEFAULT_CONFIG_FILES = ["tether.config.ts", "tether.config.mts", "tether.config.js", "tether.config.mjs"] as const;

export interface LoadConfigOptions {
  /**
   * The config file: the process's `--config`, else its TETHER_CONFIG (processes read their
   * environment; this package does not). Default: the first of `DEFAULT_CONFIG_FILES` in `cwd`.
   */
  path?: string | undefined;
  /** Where relative paths and the default files are resolved. Default `process.cwd()`. */
  cwd?: string;
}

function locate(opts: LoadConfigOptions): { file: string; absolute: string } {
  const cwd = opts.cwd ?? process.cwd();
  if (opts.path) {
    const absolute = isAbsolute(opts.path) ? opts.path : resolve(cwd, opts.path);
    if (!existsSync(absolute)) throw new ConfigError(opts.path, "file", `not found (resolved to ${absolute})`);
    return { file: opts.path, absolute };
  }
  for (const name of DEFAULT_CONFIG_FILES) {
    const absolute = resolve(cwd, name);
    if (existsSync(absolute)) return { file: name, absolute };
  }
  throw new ConfigError(DEFAULT_CONFIG_FILES[0], "file", `not found in ${cwd}; pass --config <file> or set TETHER_CONFIG`);
}

/**
 * Finds and imports `tether.config.ts` (its default export, or a named `config` export) and
 * checks its shape. TypeScript configs load with Node's own type stripping (Node >= 22.18), so
 * they may use erasable syntax only. Throws `ConfigError` naming the file and the field.
 * Checking the config against Postgres is a separate step: `checkConfigSchema`.
 *
 * @example
 * const { file, config } = await loadConfig({ path: opts.config ?? env.TETHER_CONFIG });
 */
export async function loadConfig(opts: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const { file, absolute } = locate(opts);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConfigError(file, "file", `cannot be loaded: ${reason}`, { cause: err });
  }
  const value = mod.default ?? mod.config;
  if (value === undefined) throw new ConfigError(file, "default export", "missing: export default defineConfig({ collections, sink })");
  return { file, config: validateConfig(file, value) };
}
