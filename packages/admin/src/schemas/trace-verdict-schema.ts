import { Type, type Static } from "typebox";
import type { TraceVerdict } from "@tether/core/internal";

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

// The schema lists exactly core's verdicts (TRACE_VERDICTS): a verdict added on one side only fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameVerdicts: Same<Static<typeof TraceVerdictSchema>, TraceVerdict> = true;
void sameVerdicts;
