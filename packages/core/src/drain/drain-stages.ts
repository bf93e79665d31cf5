import { stageChannel, type StageTiming } from "../ops/stage-channel.js";

/**
 * Where a drain pass spends its time, stage by stage, published on a diagnostics channel
 * (`node:diagnostics_channel`) so a profiler (the benchmark's drainer) can subscribe by name
 * without the drainer knowing about it. Nothing is measured while nobody listens.
 */
export type DrainStage = "fanout" | "claim" | "load" | "build" | "verify" | "bulk" | "readback" | "delete" | "ledger" | "commit";

/** One stage of one pass (or of one collection's share of it). */
export type DrainStageTiming = StageTiming<DrainStage>;

/** Name of the channel every stage timing is published on. */
export const DRAIN_STAGE_CHANNEL = "tether:drain-stage";

const stages = stageChannel<DrainStage>(DRAIN_STAGE_CHANNEL);

/** Whether anyone listens (callers skip their clock reads otherwise). */
export const profilingStages = stages.active;
export const publishStage = stages.publish;
/** Runs `fn` and publishes its wall time as `stage`. */
export const timeStage = stages.time;
/** The synchronous form of `timeStage` (document building, the matrix). */
export const timeStageSync = stages.timeSync;
