import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { holdPausedName, releasePausedName } from "../store/paused-lane-store.js";
import { expediteLaneSince } from "../wake/wake-store.js";

/** The reason a rebuild pauses its collection's lane with (`tether status` shows it). */
export const rebuildPauseReason = (collection: Collection<any>) => `rebuild of ${collection.name}: resumed at its swap (tether resume ${collection.jobName} if the rebuild was abandoned)`;

export interface LaneHold {
  /** Resumes the lane (if this hold paused it) and makes the jobs enqueued while it was paused due now; returns how many. */
  release(): Promise<number>;
}

/**
 * Pauses the collection's lane from the verify passes to the swap. Every write makes a job; a
 * job of a paused lane is not confirmed, so every write from the first verify pass on still has
 * its job when the alias points at the new index, and the drainer checks it there: the new index
 * needs no full check after the swap. A lane an operator paused stays theirs (nothing is
 * resumed); a lane left paused by a rebuild that was killed is taken over by the one resuming it.
 */
export async function holdLane(db: Kysely<any>, collection: Collection<any>): Promise<LaneHold> {
  const reason = rebuildPauseReason(collection);
  const since = await holdPausedName(db, collection.jobName, reason);
  return {
    async release() {
      if (!since) return 0;
      await releasePausedName(db, collection.jobName, reason);
      return expediteLaneSince(db, collection.jobName, since);
    },
  };
}
