/** The slice of a pino logger tether uses; pass a pino instance or anything shaped alike. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = () => undefined;

/** Discards everything; the default when no logger is given. */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };
