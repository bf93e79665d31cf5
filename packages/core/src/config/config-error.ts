import { TetherError } from "../errors.js";

/**
 * A `tether.config.ts` that cannot be used: missing, failing to load, of the wrong shape, or
 * naming a table or column Postgres does not have. Names the file and the field, so a process
 * that stops at start says exactly what to fix.
 */
export class ConfigError extends TetherError {
  /** The config file, as the process was given it (or the default it looked for). */
  readonly file: string;
  /** Dotted path of the offending field, e.g. `collections[0].table` or `options.drainer.batchSize`. */
  readonly field: string;
  constructor(file: string, field: string, message: string, options?: { cause?: unknown }) {
    super("E_CONFIG", `${file}: ${field}: ${message}`, options);
    this.file = file;
    this.field = field;
  }
}
