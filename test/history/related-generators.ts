import fc from "fast-check";
import type { HistoryCommand } from "./history-command.js";
import { KilledFanoutDrainer } from "./killed-fanout-drainer.js";
import { RelatedCall, RelatedTransaction } from "./related-commands.js";
import { RELATED_POOL } from "./related-model.js";
import type { RelatedStep, Via } from "./related-steps.js";

const slot = (table: keyof typeof RELATED_POOL) => fc.nat(RELATED_POOL[table] - 1);
// Mostly the first row: the seed's category, tag and order read by several products (a fan-out of several chunks).
const parentSlot = (table: keyof typeof RELATED_POOL) => fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: slot(table) });
const via: fc.Arbitrary<Via> = fc.constantFrom("writer", "sql");
// Few names, so a rename back to what a document already holds recurs.
const name = fc.oneof(fc.constantFrom("A", "B", "C"), fc.string({ maxLength: 6 }));
const orNull = <T>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: a }, { weight: 1, arbitrary: fc.constant(null) });

const parent: fc.Arbitrary<RelatedStep> = fc.oneof(
  fc.record({ op: fc.constant("parent" as const), table: fc.constantFrom("category" as const, "tag" as const), slot: parentSlot("category"), value: orNull(name), via }),
  fc.record({ op: fc.constant("parent" as const), table: fc.constant("order" as const), slot: parentSlot("order"), value: orNull(fc.constantFrom("open", "closed")), via }),
);

/** One change of the related tables, by weight: renames and stock changes most, then the links. */
export const relatedStep: fc.Arbitrary<RelatedStep> = fc.oneof(
  { weight: 6, arbitrary: parent },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("stock" as const), product: slot("product"), quantity: orNull(fc.integer({ min: 0, max: 9 })), via }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("reparent" as const), product: slot("product"), category: orNull(slot("category")), via }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("link" as const), product: slot("product"), tag: slot("tag"), linked: fc.boolean(), via }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("line" as const), line: slot("line"), order: slot("order"), product: slot("product"), quantity: orNull(fc.integer({ min: 1, max: 5 })), via }),
  },
  {
    weight: 4,
    arbitrary: fc
      .record({
        op: fc.constant("product" as const),
        product: slot("product"),
        action: fc.constantFrom("create" as const, "create" as const, "rename" as const, "softDelete" as const, "hardDelete" as const, "restore" as const),
        name,
        category: orNull(slot("category")),
        via,
      })
      .map((s) => (s.action === "restore" ? { ...s, via: "sql" as const } : s)),
  },
);

/** The related tables' commands with their weights (see ./history-generators.ts). */
export const relatedCommandArbitraries: { weight: number; arbitrary: fc.Arbitrary<HistoryCommand> }[] = [
  { weight: 16, arbitrary: relatedStep.map((s) => new RelatedCall(s)) },
  { weight: 4, arbitrary: fc.tuple(fc.array(relatedStep, { minLength: 1, maxLength: 4 }), fc.boolean()).map(([s, commit]) => new RelatedTransaction(s, commit)) },
  { weight: 2, arbitrary: fc.constantFrom(0 as const, 1 as const, 2 as const).map((n) => new KilledFanoutDrainer(n)) },
];
