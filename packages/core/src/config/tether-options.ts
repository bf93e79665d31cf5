import { Type, type Static, type TObject, type TProperties } from "@sinclair/typebox";

// Unknown keys are errors, not silently ignored: a misspelt option must stop the process.
const strict = <P extends TProperties>(properties: P): TObject<P> => Type.Object(properties, { additionalProperties: false });
const ms = (description: string) => Type.Optional(Type.Integer({ minimum: 1, description }));
const count = (description: string, minimum = 1) => Type.Optional(Type.Integer({ minimum, description }));

/**
 * The `options` block of `tether.config.ts`. Every field is optional; the defaults are the
 * component's own (see `WriterOptions`, `DrainerOptions`, `MaintenanceOptions`, `AlertThresholds`).
 * A process's environment (e.g. the drainer's TETHER_BATCH_SIZE) overrides what is set here.
 */
export const TetherOptionsSchema = strict({
  writer: Type.Optional(
    strict({
      directSyncTimeoutMs: ms("Timeout of the direct sync after COMMIT. Default 500."),
      graceMs: Type.Optional(Type.Integer({ minimum: 0, description: "Delay before the drainer may take a write's job. Default 60000." })),
      tag: Type.Optional(Type.String({ minLength: 1, description: "Tag of live write jobs. Default \"live\"." })),
      priority: Type.Optional(Type.Integer({ description: "Priority of live write jobs (lower runs first). Default 1." })),
    }),
  ),
  drainer: Type.Optional(
    strict({
      intervalMs: ms("Pause between passes that came back short. Default 60000."),
      intervalJitter: Type.Optional(Type.Number({ minimum: 0, maximum: 1, description: "Jitter of the interval, as a fraction. Default 0.1." })),
      batchSize: count("Jobs claimed per pass. Default 2500."),
      concurrency: count("Passes writing to the engine at a time while batches come back full, plus one claiming and loading the next batch ahead of them. Default 1 (the daemon: 2)."),
      deadlineMs: ms("Deadline of one drain transaction. Default 30000."),
      maxAttempts: count("Permanent per-item failures before a job is parked. Default 5."),
      sinkRetries: count("Request-level retries inside one downstream call. Default 2.", 0),
      sweepLimit: count("Expired jobs moved per statement of Drainer.sweep() (a pass sweeps through its claim). Default 10000."),
      sweepBudgetMs: ms("Time a pass may spend claiming again while its claims meet expired jobs. Default 5000."),
      fanoutChunkSize: count("Documents a pass bumps and enqueues while it expands fan-out jobs (changes of embedded tables), in one short transaction of its own. Default 10000."),
      writeFirst: Type.Optional(
        Type.Union([Type.Literal("auto"), Type.Literal("always"), Type.Literal("never")], {
          description: "Write before reading (only refused writes are read and decided): auto switches by what the passes find. Default \"auto\".",
        }),
      ),
      versionFloor: Type.Optional(
        Type.Boolean({
          description: "Raise tether.version_seq above the highest version each index holds when the loop starts and before drain --until-empty (after Postgres went back in time). Default true.",
        }),
      ),
    }),
  ),
  maintenance: Type.Optional(
    strict({
      intervalMs: ms("How often each replica attempts maintenance. Default 15000."),
      sampleIntervalMs: count("Minimum spacing of queue samples. Default 15000.", 0),
      statRetentionDays: count("Completion counts kept. Default 7."),
      sampleRetentionMs: ms("Queue samples kept. Default 86400000."),
      pruneLimit: count("Rows pruned per table per pass. Default 10000."),
      statementTimeoutMs: ms("statement_timeout of the maintenance transaction. Default 30000."),
      vacuumMinDeadTuples: count("Dead tuples of tether.job before the leader vacuums it; 0 disables. Default 10000.", 0),
      fanoutChangeRetentionMs: ms(
        "Changes of embedded tables whose fan-out finished (tether.embed_change) kept this long, so that verify finds a document an expansion skipped; keep it above the interval between verify runs. Default 604800000 (7 days).",
      ),
    }),
  ),
  tombstones: Type.Optional(
    strict({
      retentionMs: Type.Optional(Type.Integer({ minimum: 0, description: "Tombstones younger than this are kept. Default 2592000000 (30 days)." })),
      purgeIntervalMs: ms("How often the drainer's maintenance leader purges older ones. Default 3600000."),
      purge: Type.Optional(Type.Boolean({ description: "false: never purge (tombstones kept forever). Default true." })),
    }),
  ),
  verify: Type.Optional(
    strict({
      fastIntervalMs: count("Interval between the drainer's scheduled fast (bucketed) verify runs of each collection; 0: none. Default 3600000 (1 h).", 0),
      deepIntervalMs: count("Interval between scheduled deep (content) verify runs of each collection; 0: none. Default 86400000 (1 day).", 0),
      documentsPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: "Pace of a scheduled fast run, entities compared per second on average over the run (checked after each window; a window runs at the engine's speed). Default 20000." })),
      deepDocumentsPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: "Pace of a scheduled deep run, documents read per second on average over the run (checked after each page). Default 2000." })),
      leaseMs: ms("How long a scheduled run stays its process's without a checkpoint; then the next maintenance leader resumes it. Default 60000."),
      bucketSize: count("Ids (or keys) per top-level bucket of a scheduled fast run. Default 10000."),
      window: count("Top-level buckets compared between two checkpoints. Default 20."),
      afterRestoreMs: ms("After a version floor check found an index ahead of the sequence (a restore), a fast run of that collection starts at once and again this often until one finishes clean. Default 300000."),
    }),
  ),
  alerts: Type.Optional(
    strict({
      completionRateLowPerMinute: Type.Optional(Type.Number({ minimum: 0 })),
      completionRateWindowMinutes: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      completionRateRequiresBacklog: Type.Optional(Type.Boolean()),
      queueLengthHigh: Type.Optional(Type.Integer({ minimum: 0 })),
      queueLengthWindowMinutes: Type.Optional(Type.Number({ minimum: 0 })),
      expiredMax: Type.Optional(Type.Integer({ minimum: 0 })),
      parkedMax: Type.Optional(Type.Integer({ minimum: 0 })),
      oldestDueJobMaxAgeSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      verifyDriftMax: Type.Optional(Type.Integer({ minimum: 0 })),
      verifyMaxAgeSeconds: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      restoreAheadMax: Type.Optional(Type.Integer({ minimum: 0 })),
      restoreAheadWindowMinutes: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    }),
  ),
});

/** The `options` block of `tether.config.ts` (writer, drainer, maintenance, tombstones, verify, alerts). */
export type TetherOptions = Static<typeof TetherOptionsSchema>;
