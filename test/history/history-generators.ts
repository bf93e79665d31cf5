import fc from "fast-check";
import { shopProducts } from "../support/shop.js";
import { ID_KINDS, tableOf, type IdKind } from "./history-domain.js";
import { POOL_SIZE } from "./history-ids.js";
import type { HistoryCommand, Ref } from "./history-command.js";
import { REFUSED_RANK } from "./history-model.js";
import { CliRebuild, CliVerify, DrainPasses, DrainUnderFault, FAULTS, KilledDrainer, SetFault } from "./ops-commands.js";
import { SqlCopy, SqlDelete, SqlDeleteReinsert, SqlInsert, SqlKeyChange, SqlMerge, SqlSoftDelete, SqlUpdate, SqlUpsert } from "./sql-commands.js";
import { LostWriteOverOlderDocument } from "./lost-write-commands.js";
import { FanoutOverQuietQueue } from "./quiet-fanout.js";
import { ReinsertedRow } from "./reinserted-row.js";
import { IndexSnapshot, PostgresCheckpoint, RestoreIndexSnapshot, RestorePostgres } from "./restore-commands.js";
import { relatedCommandArbitraries } from "./related-generators.js";
import { CallerTransaction, WriterCall, WriteWithJobs, type WriterStep } from "./writer-commands.js";

const kind = fc.constantFrom(...ID_KINDS);
const slot = fc.nat(POOL_SIZE - 1);
const slots = fc.uniqueArray(slot, { minLength: 1, maxLength: 3 });
// Few titles, so equal content recurs (a re-insert of what was there, an update to the same value).
const title = fc.oneof(fc.constantFrom("A", "B", "C"), fc.string({ maxLength: 8 }));
const rank = fc.oneof(
  { weight: 8, arbitrary: fc.constant(null) },
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 99 }).map(String) },
  { weight: 1, arbitrary: fc.constant(REFUSED_RANK) },
);
const ref = (k: fc.Arbitrary<IdKind> = kind): fc.Arbitrary<Ref> => fc.record({ kind: k, slot });
const newRow = fc.record({ slot, title, rank });
const newRows = fc.array(newRow, { minLength: 1, maxLength: 3 });

const step: fc.Arbitrary<WriterStep> = fc.oneof(
  fc.record({ op: fc.constant("create" as const), ref: ref(), title, rank }),
  fc.record({ op: fc.constant("update" as const), ref: ref(), title, rank }),
  fc.record({ op: fc.constant("softDelete" as const), ref: ref() }),
  fc.record({ op: fc.constant("hardDelete" as const), ref: ref() }),
  fc.record({ op: fc.constant("sqlUpdate" as const), ref: ref(), title }),
);
const DRAIN_FAULTS = ["200 dropping half the items", "200 dropping half the items", "200 dropping half the items", "429", "503", "late (bulks delivered late, reordered)"];
const writerCall = step.filter((s) => s.op !== "sqlUpdate").map((s) => new WriterCall(s));

/**
 * Every command of a history with its weight. Spawned processes (a killed drainer, `tether
 * verify`, `tether rebuild`) cost seconds each on a small machine: they are rarer than writes.
 */
export const commandArbitraries: { weight: number; arbitrary: fc.Arbitrary<HistoryCommand> }[] = [
  { weight: 10, arbitrary: writerCall },
  { weight: 3, arbitrary: fc.tuple(fc.array(step, { minLength: 1, maxLength: 4 }), fc.boolean()).map(([s, commit]) => new CallerTransaction(s, commit)) },
  { weight: 2, arbitrary: fc.tuple(kind, slots, title).map(([k, s, t]) => new WriteWithJobs(k, s, t)) },
  { weight: 3, arbitrary: fc.tuple(kind, newRows).map(([k, r]) => new SqlInsert(k, r)) },
  { weight: 3, arbitrary: fc.tuple(kind, slots, title, fc.boolean()).map(([k, s, t, rb]) => new SqlUpdate(k, s, t, rb)) },
  { weight: 2, arbitrary: fc.tuple(kind, slots).map(([k, s]) => new SqlSoftDelete(k, s)) },
  { weight: 2, arbitrary: fc.tuple(kind, slots).map(([k, s]) => new SqlDelete(k, s)) },
  { weight: 3, arbitrary: fc.tuple(kind, newRow, fc.boolean()).map(([k, r, one]) => new SqlDeleteReinsert(k, r, one)) },
  { weight: 2, arbitrary: fc.tuple(kind, slot, slot).map(([k, a, b]) => new SqlKeyChange(k, a, b)) },
  { weight: 2, arbitrary: fc.tuple(kind, newRows).map(([k, r]) => new SqlUpsert(k, r)) },
  { weight: 2, arbitrary: fc.tuple(kind, fc.array(fc.record({ slot, title, rank, remove: fc.boolean() }), { minLength: 1, maxLength: 3 })).map(([k, r]) => new SqlMerge(k, r)) },
  { weight: 2, arbitrary: fc.tuple(kind, newRows).map(([k, r]) => new SqlCopy(k, r)) },
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom("writer" as const, "drainer" as const), fc.constantFrom(...Object.keys(FAULTS))).map(([t, f]) => new SetFault(t, f)) },
  { weight: 5, arbitrary: fc.tuple(fc.constantFrom(1 as const, 2 as const), fc.boolean()).map(([n, bg]) => new DrainPasses(n, bg)) },
  // Faults while a pass writes, most of them a 200 that drops items: what it confirms must be what the engine holds.
  { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...DRAIN_FAULTS), fc.constantFrom(1 as const, 2 as const)).map(([f, n]) => new DrainUnderFault(f, n)) },
  // A document made older than its row, then a pass whose writes are all lost: the read-back meets an older live document.
  {
    weight: 4,
    arbitrary: fc.tuple(fc.constantFrom(...ID_KINDS, "product" as const, "product" as const), fc.nat(9), title).map(([k, pick, t]) => new LostWriteOverOlderDocument(k, pick, t)),
  },
  // A row's second life: changed, deleted and inserted again under the same id.
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...ID_KINDS, "product" as const), fc.nat(9), title).map(([k, pick, t]) => new ReinsertedRow(k, pick, t)) },
  // A fan-out over a quiet queue: only its chunks bring the documents it reaches up to date.
  { weight: 2, arbitrary: fc.tuple(fc.nat(9), title).map(([pick, name]) => new FanoutOverQuietQueue(pick, name)) },
  { weight: 1, arbitrary: fc.constant(null).map(() => new KilledDrainer()) },
  { weight: 1, arbitrary: fc.boolean().map((deep) => new CliVerify(deep)) },
  { weight: 1, arbitrary: fc.constantFrom(...ID_KINDS.map(tableOf), shopProducts.name).map((c) => new CliRebuild(c)) },
  // Either side going back in time: a Postgres checkpoint and the restore to it, an index snapshot and its restore.
  { weight: 1, arbitrary: fc.constant(null).map(() => new PostgresCheckpoint()) },
  { weight: 1, arbitrary: fc.constantFrom("at once" as const, "later" as const).map((f) => new RestorePostgres(f)) },
  { weight: 1, arbitrary: fc.constant(null).map(() => new IndexSnapshot()) },
  { weight: 1, arbitrary: fc.constant(null).map(() => new RestoreIndexSnapshot()) },
  // The related tables (documents read from several tables): their writes, their rollbacks, a fan-out killed mid-way.
  ...relatedCommandArbitraries,
];

/**
 * A history: up to `maxCommands` commands drawn by weight. `replayPath` (fast-check's record of
 * which commands ran, printed with a divergence) replays a shrunk history exactly.
 */
export const historyCommands = (maxCommands: number, replayPath?: string) =>
  fc.commands([fc.oneof(...commandArbitraries)], { maxCommands, size: "max", ...(replayPath ? { replayPath } : {}) });
