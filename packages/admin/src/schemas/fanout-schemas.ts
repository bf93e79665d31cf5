import { Type } from "typebox";
import { Nullable, Timestamp } from "./common-schemas.js";

/** Where a sync job came from when a change of an embedded table enqueued it (its kwargs.via). */
export const ViaSchema = Type.Object(
  {
    table: Type.String({ description: "The embedded table whose row changed" }),
    column: Type.String({ description: "Its link column" }),
    value: Type.String({ description: "The changed row's link value" }),
    fanout: Type.Optional(Type.String({ description: "The fan-out job that expanded the change (absent for a direct embed's bump)" })),
  },
  { description: "Which row of which table (and which fan-out) enqueued it" },
);

/** A fan-out job in the queue with its progress (the queue read model's `fanouts`). */
export const FanoutSchema = Type.Object({
  id: Type.String({ description: "The fan-out job's id" }),
  name: Type.String({ description: "Its lane, fanout_<collection>" }),
  collection: Type.String(),
  embed: Type.String({ description: "The embed whose row changed" }),
  link: Type.String({ description: "The changed row's link value" }),
  tag: Type.String(),
  priority: Type.Integer(),
  done: Type.Integer({ description: "Documents bumped and given a sync job so far" }),
  total: Nullable(Type.Integer({ description: "Documents it reaches; null until its first chunk came back full" })),
  attempts: Type.Integer(),
  lastError: Nullable(Type.String()),
  enqueuedAt: Timestamp,
  ageSeconds: Type.Number({ description: "Since the change committed" }),
  state: Type.Union([Type.Literal("due"), Type.Literal("future"), Type.Literal("expired")]),
});
