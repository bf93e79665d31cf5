import { Type } from "typebox";

/** What the entity trace concludes. */
export const TraceVerdictSchema = Type.Union(
  [
    Type.Literal("in_sync"),
    Type.Literal("deleted_in_sync"),
    Type.Literal("absent"),
    Type.Literal("missing"),
    Type.Literal("stale"),
    Type.Literal("ahead"),
    Type.Literal("content_differs"),
    Type.Literal("ghost"),
    Type.Literal("deleted_live"),
    Type.Literal("unknown"),
  ],
  { description: "missing: live in Postgres, absent or tombstoned downstream; stale/ahead: versions differ; content_differs: same version, other content; ghost: only downstream; deleted_live: deleted in Postgres, live downstream; unknown: the downstream could not be asked" },
);
