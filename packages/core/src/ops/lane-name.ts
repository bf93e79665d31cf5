import type { Collection } from "../collection.js";
import { NotFoundError, ValidationError } from "../errors.js";

/** A lane name that is neither a job name nor a collection name of the configured collections. */
export class UnknownLaneError extends NotFoundError {
  constructor(
    /** The name as given. */
    readonly lane: string,
    /** The configured lanes, as `jobName (collection)`. */
    readonly configured: readonly string[],
  ) {
    super(`lane "${lane}"`);
    this.message = `unknown lane "${lane}"; configured: ${configured.length ? configured.join(", ") : "none"}`;
  }
}

/** What a lane's jobs are: a collection's sync jobs, or its fan-out jobs (changes of embedded tables to expand). */
export type LaneKind = "sync" | "fanout";

/** A lane the configured collections handle. */
export interface ConfiguredLane {
  /** The job name: `sync_<collection>` (or the collection's own job name), `fanout_<collection>`. */
  name: string;
  /** The collection it belongs to. */
  collection: string;
  kind: LaneKind;
}

type LaneOwner = Pick<Collection<any>, "name" | "jobName"> & { readonly fanoutJobName?: string | undefined };

/**
 * Every lane the collections handle: each collection's sync lane, and its fan-out lane when it
 * has fan-out embeds. The one list `tether pause|resume`, `tether status` and the console's
 * lanes share.
 *
 * @example
 * configuredLanes([products]); // [{ name: "sync_product", … kind: "sync" }, { name: "fanout_product", … kind: "fanout" }]
 */
export function configuredLanes(collections: readonly LaneOwner[]): ConfiguredLane[] {
  return collections.flatMap((c) => [
    { name: c.jobName, collection: c.name, kind: "sync" as const },
    ...(c.fanoutJobName ? [{ name: c.fanoutJobName, collection: c.name, kind: "fanout" as const }] : []),
  ]);
}

/**
 * The job name of a lane given as a job name (`sync_annotation`, `fanout_product`) or a
 * collection name (`annotation`: its sync lane): the one resolution `tether pause|resume` and the
 * console's lane actions share. A name no configured collection handles is refused
 * (UnknownLaneError) unless `force`: a typo would otherwise pause an empty lane and report
 * success while the real one keeps draining. `force` is for a lane whose jobs come from
 * elsewhere, paused before its first job arrives.
 *
 * Pausing a fan-out lane stops drainers from expanding its changes: the documents they reach
 * keep their old content until it is resumed (one synced meanwhile for another reason is rebuilt
 * from its rows, never confirmed as it stood); the sync jobs already expanded keep draining in
 * the collection's sync lane.
 *
 * @example
 * resolveLaneName([annotations], "annotation"); // "sync_annotation"
 * resolveLaneName([products], "fanout_product"); // "fanout_product"
 * resolveLaneName([annotations], "sync_other", { force: true }); // "sync_other"
 */
export function resolveLaneName(collections: readonly LaneOwner[], raw: string, opts: { force?: boolean } = {}): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > 200) throw new ValidationError("name", "a lane name must be 1..200 characters");
  const lanes = configuredLanes(collections);
  const byJob = lanes.find((l) => l.name === name);
  if (byJob) return byJob.name;
  const byCollection = collections.find((c) => c.name === name);
  if (byCollection) return byCollection.jobName;
  if (opts.force) return name;
  throw new UnknownLaneError(name, lanes.map((l) => `${l.name} (${l.collection}${l.kind === "fanout" ? " fan-out" : ""})`));
}
