/**
 * The bugs the history tester must catch (scripts/history-mutants): each a small patch of the
 * sources, an exact snippet replaced. A snippet that is not found exactly once fails the run
 * loudly, so a mutant cannot rot silently when the code it patches moves.
 */

export interface MutantPatch {
  /** Path from the repository's root. */
  file: string;
  find: string;
  replace: string;
}

export interface Mutant {
  name: string;
  /** What the bug is, in a line. */
  bug: string;
  patches: MutantPatch[];
}

export const HISTORY_MUTANTS: readonly Mutant[] = [
  {
    name: "read-back-ignored",
    bug: "the drainer confirms a write as if the engine held what it sent, without reading it back",
    patches: [
      {
        file: "packages/core/src/drain/collection-pass.ts",
        find: "const verdict = readBackVerdict(collection, w.entity.row, w.op, after.get(w.entity.id), w.conflictVersion);",
        replace: 'const verdict = readBackVerdict(collection, w.entity.row, w.op, { version: w.op.version, deleted: w.op.kind !== "index" }, w.conflictVersion);',
      },
    ],
  },
  {
    name: "older-document-confirmed",
    bug: "a document older than the row, read back after a write, is confirmed as if current",
    patches: [
      {
        file: "packages/core/src/verify/verification-matrix.ts",
        find: "if (ds === undefined || ds.deleted || ds.version !== v) return false;",
        replace: "if (ds === undefined || ds.deleted || ds.version > v) return false;\n  if (ds.version < v) return true;",
      },
    ],
  },
  {
    name: "versions-plus-one",
    bug: "a version is the row's version + 1 instead of the next value of the version sequence",
    patches: [
      { file: "packages/core/src/migrations/compiled.ts", find: "v bigint := nextval('tether.version_seq');", replace: "v bigint := 0;" },
      { file: "packages/core/src/migrations/sql/000005_version_seq.sql", find: "v bigint := nextval('tether.version_seq');", replace: "v bigint := 0;" },
    ],
  },
  {
    name: "captured-update-enqueues-nothing",
    bug: "a captured UPDATE that keeps the key changes the row's version but enqueues no job",
    patches: [
      {
        file: "packages/core/src/capture/capture-store.ts",
        find: "WHERE n.${id} IS NULL OR o.${id} IS NULL OR n.${version} IS DISTINCT FROM o.${version};",
        replace: "WHERE n.${id} IS NULL OR o.${id} IS NULL;",
      },
    ],
  },
  {
    name: "fanout-skips-a-chunk",
    bug: "a fan-out's expansion skips the chunk after each one it committed",
    patches: [
      {
        file: "packages/core/src/store/embed-store.ts",
        find: "ORDER BY ${t(collection.idColumn)} LIMIT ${fanout.limit}\n",
        replace: "ORDER BY ${t(collection.idColumn)} LIMIT ${fanout.limit} OFFSET ${fanout.after === undefined ? 0 : fanout.limit}\n",
      },
    ],
  },
  {
    name: "related-change-bumps-nothing",
    bug: "a change of a row read by a direct embed (stock, join row, order line) bumps no document, by the writer or by capture",
    patches: [
      {
        file: "packages/core/src/capture/embed-capture-store.ts",
        find: "`    FROM l WHERE ${t(collection.idColumn)} = l.v${live}",
        replace: "`    FROM l WHERE false AND ${t(collection.idColumn)} = l.v${live}",
      },
      {
        file: "packages/core/src/store/embed-store.ts",
        find: 'WHERE flag.f IS NOT NULL AND ${ref("t", collection.idColumn)} = ANY(${arrayLiteral(ids)})',
        replace: 'WHERE false AND flag.f IS NOT NULL AND ${ref("t", collection.idColumn)} = ANY(${arrayLiteral(ids)})',
      },
    ],
  },
  {
    name: "read-back-ignores-content",
    bug: "a document at the row's version is confirmed whatever body it holds (a version handed out again after Postgres went back in time)",
    patches: [
      {
        file: "packages/core/src/verify/verification-matrix.ts",
        find: "return ds.content === undefined || content === undefined || ds.content === content;",
        replace: "return true;",
      },
    ],
  },
  {
    name: "version-floor-skipped",
    bug: "the version floor check never raises the sequence above what the engine holds",
    patches: [
      {
        file: "packages/core/src/ops/version-floor.ts",
        find: "const raised = engineHighest >= sequenceNext;",
        replace: "const raised = false;",
      },
    ],
  },
];

/** Applies a mutant's patches to the text of its files; throws when a snippet is not found exactly once. */
export function applyMutant(mutant: Mutant, read: (file: string) => string, write: (file: string, text: string) => void): void {
  for (const p of mutant.patches) {
    const text = read(p.file);
    const at = text.indexOf(p.find);
    if (at < 0 || text.indexOf(p.find, at + 1) >= 0) {
      throw new Error(`mutant ${mutant.name}: the snippet to replace is ${at < 0 ? "not" : "more than once"} in ${p.file}: ${JSON.stringify(p.find)}`);
    }
    write(p.file, text.slice(0, at) + p.replace + text.slice(at + p.find.length));
  }
}
