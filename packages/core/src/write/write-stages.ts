import { stageChannel } from "../ops/stage-channel.js";

/**
 * Where a write spends its time, published on a diagnostics channel like the drain's stages:
 * `transaction` (BEGIN … COMMIT), `build` (the documents of the direct sync), `queue` (a sync
 * waiting for its batch to leave), `bulk` (one `_bulk` round trip, serialising included; its
 * items are the batch's operations), `sync` (one write's whole direct sync) and `expedite`
 * (making a failed sync's jobs due). Nothing is measured while nobody listens.
 */
export type WriteStage = "transaction" | "build" | "queue" | "bulk" | "sync" | "expedite";

/** Name of the channel every write stage timing is published on. */
export const WRITE_STAGE_CHANNEL = "tether:write-stage";

export const writeStages = stageChannel<WriteStage>(WRITE_STAGE_CHANNEL);
