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
