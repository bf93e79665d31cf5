import type { DownstreamState, SinkCallOptions, SinkOperation, Sink } from "../sink.js";

/** A write the downstream accepted, as the read-back sees it. */
export interface ReadBackWrite {
  id: string;
  op: SinkOperation;
  /**
   * The bulk reported this item written (not refused as older) over a version the engine was
   * read to hold below it: its version alone then tells it landed. Any other write (refused,
   * blind, forced) is read back whole, content hash included.
   */
  written: boolean;
}

/**
 * Reads back what a drain batch wrote, realtime. A write the bulk reported done over a version
 * the engine was read to hold below it is read by version only (when the sink can): finding
 * exactly the version we wrote confirms it holds what we wrote, since external versioning lets
 * nothing else land at that version but a forced rewrite of the same row version. A blind or
 * forced write is read whole: the engine may have held that very version already, with another
 * body (a version handed out twice after Postgres went back in time), and the bulk's "created"
 * alone confirms nothing. A missing or different version (an item the engine
 * dropped while answering "created", or a newer write since) falls back to a full state read,
 * as do refused writes and deletes. Nothing is confirmed from the bulk's answer alone.
 */
export async function readBack(sink: Sink, index: string, writes: readonly ReadBackWrite[], opts: SinkCallOptions): Promise<Map<string, DownstreamState>> {
  const after = new Map<string, DownstreamState>();
  const byVersion = sink.fetchVersions ? writes.filter((w) => w.written && w.op.kind !== "delete") : [];
  const full: string[] = [];
  if (byVersion.length > 0) {
    const versions = await sink.fetchVersions!(index, byVersion.map((w) => w.id), opts);
    for (const w of byVersion) {
      if (versions.get(w.id) === w.op.version) after.set(w.id, { version: w.op.version, deleted: w.op.kind === "tombstone" });
      else full.push(w.id);
    }
  }
  const versionRead = new Set(byVersion.map((w) => w.id));
  for (const w of writes) if (!versionRead.has(w.id)) full.push(w.id);
  if (full.length > 0) for (const [id, state] of await sink.fetchStates(index, full, opts)) after.set(id, state);
  return after;
}
