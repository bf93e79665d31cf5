import type { Meter } from "@opentelemetry/api";
import type { Logger, RestoreFindings } from "@tether/core/internal";

/**
 * The restore gauges, observed at scrape time from Postgres (the same on every replica; take
 * max() across instances): per collection, 1 while a version floor check that found its index
 * ahead of tether.version_seq is not settled by a clean fast verify (else 0), and the documents
 * drain passes found ahead of their rows within the restore window. The TetherRestoreDetected
 * rule reads both (infra/prometheus/tether-rules.yml).
 */
export function observeRestores(meter: Meter, read: () => Promise<RestoreFindings>, collections: readonly string[], logger: Logger): void {
  const unsettled = meter.createObservableGauge("tether_restore_unsettled", {
    description: "1 while a version floor check found the collection's index holding versions at or above tether.version_seq and no clean fast verify has finished since",
  });
  const ahead = meter.createObservableGauge("tether_restore_documents_ahead", {
    description: "Documents drain passes found ahead of their rows (newer, or another body at the row's version) within the restore alert's window",
  });
  meter.addBatchObservableCallback(
    async (result) => {
      let f: RestoreFindings;
      try {
        f = await read();
      } catch (err) {
        logger.warn({ err: String(err) }, "could not read the restore findings for /metrics");
        return;
      }
      const open = new Set(f.unsettled.map((r) => r.collection));
      for (const collection of new Set([...collections, ...open, ...f.ahead.keys()])) {
        result.observe(unsettled, open.has(collection) ? 1 : 0, { collection });
        result.observe(ahead, f.ahead.get(collection) ?? 0, { collection });
      }
    },
    [unsettled, ahead],
  );
}
