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

/**
 * The job name of a lane given as a job name (`sync_annotation`) or a collection name
 * (`annotation`): the one resolution `tether pause|resume` and the console's lane actions share.
 * A name no configured collection handles is refused (UnknownLaneError) unless `force`: a typo
 * would otherwise pause an empty lane and report success while the real one keeps draining.
 * `force` is for a lane whose jobs come from elsewhere, paused before its first job arrives.
 *
 * @example
 * resolveLaneName([annotations], "annotation"); // "sync_annotation"
 * resolveLaneName([annotations], "sync_other", { force: true }); // "sync_other"
 */
export function resolveLaneName(collections: readonly Pick<Collection<any>, "name" | "jobName">[], raw: string, opts: { force?: boolean } = {}): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > 200) throw new ValidationError("name", "a lane name must be 1..200 characters");
  const byJob = collections.find((c) => c.jobName === name);
  if (byJob) return byJob.jobName;
  const byCollection = collections.find((c) => c.name === name);
  if (byCollection) return byCollection.jobName;
  if (opts.force) return name;
  throw new UnknownLaneError(name, collections.map((c) => `${c.jobName} (${c.name})`));
}
