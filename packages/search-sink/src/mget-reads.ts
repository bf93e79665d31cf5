import { RetryableSinkError, type DownstreamState } from "@tether/core";
import { META_FIELD } from "./document-meta.js";
import type { MgetDoc } from "./engine-answers.js";

/** The documents of a realtime `_mget` that exist; a missing index reads as nothing, any other item error throws. */
function found(docs: readonly MgetDoc[]): MgetDoc[] {
  return docs.filter((doc) => {
    if (doc.error) {
      if (doc.error.type === "index_not_found_exception") return false;
      throw new RetryableSinkError(`mget item ${doc._id} failed: ${doc.error.type}: ${doc.error.reason ?? ""}`);
    }
    return doc.found === true;
  });
}

/** Version, tombstone flag and (for a live document that has one) content hash per id. */
export function statesOf(docs: readonly MgetDoc[]): Map<string, DownstreamState> {
  return new Map(
    found(docs).map((doc) => {
      const meta = doc._source?.tether;
      const deleted = meta?.deleted === true;
      const content = !deleted && typeof meta?.content === "string" ? { content: meta.content } : {};
      return [doc._id, { version: Number(doc._version ?? 0), deleted, ...content }];
    }),
  );
}

/** Version per id. */
export function versionsOf(docs: readonly MgetDoc[]): Map<string, number> {
  return new Map(found(docs).map((doc) => [doc._id, Number(doc._version ?? 0)]));
}

/** A document's body without tether's metadata; undefined when absent or a tombstone. */
export function sourceOf(doc: MgetDoc): Record<string, unknown> | undefined {
  if (!doc.found || !doc._source) return undefined;
  const { [META_FIELD]: meta, ...source } = doc._source as Record<string, unknown>;
  if ((meta as { deleted?: boolean } | undefined)?.deleted === true) return undefined;
  return source;
}
