/**
 * The API's answers, as the server's TypeBox schemas define them (one schema, one type: the
 * page imports the types, never the schemas' code).
 */
import type { Static } from "typebox";
import type { AuditSchema } from "../../src/routes/audit-routes.js";
import type { DeadJobSchema } from "../../src/routes/dead-job-routes.js";
import type { DrainerSchema } from "../../src/routes/drainer-routes.js";
import type { QueuedJobSchema } from "../../src/routes/job-routes.js";
import type { CollectionSchema, LaneSchema, OverviewSchema } from "../../src/routes/overview-routes.js";
import type { TraceSchema } from "../../src/routes/trace-routes.js";
import type { RunDetail, VerifyRunSchema } from "../../src/routes/verify-routes.js";

export type Overview = Static<typeof OverviewSchema>;
export type Lane = Static<typeof LaneSchema>;
export type CollectionInfo = Static<typeof CollectionSchema>;
export type QueuedJob = Static<typeof QueuedJobSchema>;
export type DeadJob = Static<typeof DeadJobSchema>;
export type VerifyRun = Static<typeof VerifyRunSchema>;
export type VerifyRunDetail = Static<typeof RunDetail>;
export type Trace = Static<typeof TraceSchema>;
export type Drainer = Static<typeof DrainerSchema>;
export type AuditEntry = Static<typeof AuditSchema>;
export interface Paged<T> {
  items: T[];
  nextCursor: string | null;
}
