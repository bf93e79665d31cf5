import { ConnectionSettingError, describeIndexReport, indexReadiness, type Collection, type Sink } from "@tether/core";
import type { Logger } from "pino";

/**
 * Ensures a collection's index as `tether migrate` does (created behind its alias with the
 * declared mapping when missing; a mapping that differs is logged with its fix) without holding
 * up start-up: attempts with a backoff (1 s, doubling to 30 s) until the engine answers, each
 * logged once as a warning. A connection setting that cannot work rejects `done` with its
 * `ConnectionSettingError`. The API serves
 * writes meanwhile (their jobs wait in Postgres); searches answer 503 until the engine does.
 *
 * @example
 * const ensuring = ensureIndexInBackground(sink, annotations, logger);
 * onShutdown(logger, "bye", async () => ensuring.stop());
 */
export function ensureIndexInBackground(sink: Sink, collection: Collection<any>, logger: Logger): { done: Promise<boolean>; stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const done = (async () => {
    for (let attempt = 0, delay = 1_000; !stopped; attempt++, delay = Math.min(30_000, delay * 2)) {
      try {
        const [report] = await indexReadiness(sink, [collection], { create: true, call: { timeoutMs: 10_000 } });
        // A refused privilege is retried too: the role may be fixed while the API serves writes.
        // The app's documented role creates no index: `tether migrate` (under the drainer's) does.
        if (report!.state === "forbidden") throw new Error(`${report!.error}; or create the index with \`tether migrate\` (the drainer's role), as docs/connecting.md#roles says`);
        if (report!.state === "unreachable") throw new Error(report!.error);
        if (report!.fix) logger.warn({ index: collection.index, state: report!.state, problems: report!.problems, fix: report!.fix }, describeIndexReport(report!));
        else if (attempt > 0) logger.info({ index: collection.index, attempts: attempt + 1 }, "index ensured");
        return true;
      } catch (err) {
        // A connection setting that cannot work (a CA fingerprint the node's chain cannot satisfy) is not retried: `done` rejects.
        if (err instanceof ConnectionSettingError) throw err;
        logger.warn({ err: String(err), index: collection.index, retryInMs: delay }, "could not ensure the index; serving writes meanwhile and retrying");
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, delay);
      });
    }
    return false;
  })();
  return {
    done,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
    },
  };
}
