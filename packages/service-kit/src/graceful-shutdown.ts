import type { Logger } from "pino";

/**
 * On the first SIGTERM or SIGINT: logs, runs `stop` (finish in-flight work, close servers and
 * pools), then exits 0 — or 1 if stopping failed. Later signals are ignored.
 */
export function onShutdown(logger: Logger, message: string, stop: () => Promise<unknown>): void {
  let closing = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      if (closing) return;
      closing = true;
      logger.info({ signal }, message);
      stop().then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err: String(err) }, "shutdown failed");
          process.exit(1);
        },
      );
    });
  }
}
