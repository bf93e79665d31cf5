import { defineCollection, migrate, type Collection, type MigrationSet } from "@tether/core";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, type TestContext } from "@tether/testkit";

/** A collection keyed by text the application chooses (an e-mail, a case number, a name). */
export interface TicketRow {
  id: string;
  subject: string;
  tags: string[];
  version: string;
  deleted_at: Date | null;
}

export const ticketMigrations: MigrationSet = {
  namespace: "tickets",
  migrations: [
    {
      id: 1,
      name: "ticket",
      sql: `CREATE TABLE ticket (
        id text PRIMARY KEY,
        subject text NOT NULL,
        tags text[] NOT NULL DEFAULT '{}',
        version bigint NOT NULL DEFAULT 1,
        deleted_at timestamptz
      )`,
    },
  ],
};

export const tickets: Collection<TicketRow> = defineCollection<TicketRow>({
  name: "ticket",
  table: "ticket",
  index: "tickets",
  deletedColumn: "deleted_at",
  toDocument: (r) => ({ subject: r.subject, tags: r.tags }),
  mappings: { properties: { subject: { type: "text" }, tags: { type: "keyword" } } },
  reindexScopes: { ids: { kind: "ids" } },
});

/** A test context (the project's sink) with the ticket table migrated; the index is left to the test. */
export async function createTicketContext(): Promise<TestContext<EngineSink>> {
  const ctx = await createTestContext({ sink: "per-project" });
  await migrate(ctx.db, [ticketMigrations]);
  return ctx;
}
