import { contentHash, type SinkOperation } from "@tether/core";
import { documentMeta, META_FIELD } from "./document-meta.js";

/**
 * The `_bulk` lines of one operation. External versioning makes the engine refuse an older
 * version; `force` (external_gte) also rewrites an equal one. A delete must exceed what is
 * stored, so it never takes `force`.
 */
export function bulkLines(op: SinkOperation, target: string): unknown[] {
  const versionType = "force" in op && op.force ? "external_gte" : "external";
  switch (op.kind) {
    case "index":
      return [
        { index: { _index: target, _id: op.id, version: op.version, version_type: versionType } },
        // The content hash lets `tether verify --deep` tell an edit behind tether's back at the same version.
        { ...op.document, [META_FIELD]: { ...documentMeta(op.id, op.version, false), content: contentHash(op.document) } },
      ];
    case "tombstone":
      return [{ index: { _index: target, _id: op.id, version: op.version, version_type: versionType } }, { [META_FIELD]: documentMeta(op.id, op.version, true) }];
    case "delete":
      return [{ delete: { _index: target, _id: op.id, version: op.version, version_type: "external" } }];
  }
}

/** Lines as one `_bulk` body: NDJSON, each line ending in a newline. */
export function ndjson(lines: readonly unknown[]): string {
  let out = "";
  for (const line of lines) out += `${JSON.stringify(line)}\n`;
  return out;
}

/**
 * Splits bodies of known sizes into consecutive runs of at most `maxBytes` each, in order, as
 * `[start, end)` ranges. A body larger than `maxBytes` alone goes alone: the engine decides
 * (a 413 parks that one item, not its neighbours).
 *
 * @example
 * splitBySize([4, 4, 4], 8); // [[0, 2], [2, 3]]
 */
export function splitBySize(sizes: readonly number[], maxBytes: number): [number, number][] {
  const runs: [number, number][] = [];
  let start = 0;
  let bytes = 0;
  sizes.forEach((size, i) => {
    if (i > start && bytes + size > maxBytes) {
      runs.push([start, i]);
      start = i;
      bytes = 0;
    }
    bytes += size;
  });
  if (sizes.length > start) runs.push([start, sizes.length]);
  return runs;
}
