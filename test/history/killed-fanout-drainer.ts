import pg from "pg";
import { sql } from "kysely";
import { waitFor } from "@tether/testkit";
import type { HistoryCommand } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import { startTether } from "./history-processes.js";
import type { HistorySystem } from "./history-system.js";

interface Holder {
  client: pg.Client;
  pid: number;
}

/** A connection of its own holding one product's row lock until released. */
async function holdProduct(sys: HistorySystem, id: string): Promise<Holder> {
  const client = new pg.Client({ connectionString: sys.databaseUrl, application_name: "tether-history-lock" });
  await client.connect();
  await client.query("BEGIN");
  await client.query("SELECT 1 FROM shop_product WHERE id = $1::bigint FOR UPDATE", [id]);
  const pid = Number((await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid);
  return { client, pid };
}

async function release(h: Holder): Promise<void> {
  await h.client.query("ROLLBACK").catch(() => undefined);
  await h.client.end().catch(() => undefined);
}

/**
 * The holder a `tether` process waits on, if any, and whether the waiting statement is a fan-out
 * chunk (its `FOR UPDATE OF t` of the documents reached) or something else of the drain pass (the
 * sync batch bumping a product whose embedded change is pending, under the claim's lock_timeout).
 * pg_stat_activity keeps the first 1 kB of a statement: a chunk is told by its opening CTE.
 */
async function blockingHolder(sys: HistorySystem, holders: readonly Holder[]): Promise<{ holder: Holder; chunk: boolean } | undefined> {
  const r = await sql<{ b: number; chunk: boolean }>`
    SELECT unnest(pg_blocking_pids(pid)) AS b, query LIKE '%WITH ids AS (%SELECT%FROM "shop_product" AS t%' AS chunk FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = 'tether-cli' AND wait_event_type = 'Lock'`.execute(sys.db);
  for (const x of r.rows) {
    const holder = holders.find((h) => h.pid === Number(x.b));
    if (holder) return { holder, chunk: x.chunk };
  }
  return undefined;
}

/**
 * A drainer process (`tether drain --until-empty`, one document per expansion chunk) SIGKILLed in
 * the middle of a fan-out: every live product's row is held locked by a connection of its own,
 * so each chunk waits on the next document it reaches; `chunks` of them are let through (each
 * commits its bump, its sync job and the fan-out's progress), and the process is killed while
 * the next one waits, its transaction open. A product the pass's sync batch waits on is released
 * at once (that is not a chunk). Skipped when no fan-out job is due.
 */
export class KilledFanoutDrainer implements HistoryCommand {
  constructor(readonly chunks: 0 | 1 | 2) {}
  check = () => true;
  async run(_m: HistoryModel, sys: HistorySystem) {
    const due = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE starts_with(name, 'fanout_') AND scheduled_at <= now()`.execute(sys.db);
    if (Number(due.rows[0]!.n) === 0) return;
    const ids = await sql<{ id: string }>`SELECT id::text AS id FROM shop_product WHERE deleted_at IS NULL ORDER BY id`.execute(sys.db);
    const holders: Holder[] = [];
    try {
      for (const { id } of ids.rows) holders.push(await holdProduct(sys, id));
      const drainer = startTether(sys, ["drain", "--until-empty", "--timeout", "120"]);
      let exited = false;
      void drainer.done.then(() => (exited = true));
      try {
        for (let let_through = 0; ; ) {
          const waiting = await waitFor(async () => (exited ? "exited" : await blockingHolder(sys, holders)), {
            what: "the drainer's fan-out chunk to wait on a product's lock, or its run to end",
            timeoutMs: 60_000,
            intervalMs: 10,
          }).catch(() => "timeout" as const);
          if (typeof waiting === "string" || (waiting.chunk && let_through >= this.chunks)) break;
          // A chunk let through commits; the sync batch's bump of a held product goes on at once
          // (held, it would fail at the lock_timeout, and the pass with it, again and again).
          if (waiting.chunk) let_through += 1;
          holders.splice(holders.indexOf(waiting.holder), 1);
          await release(waiting.holder);
        }
      } finally {
        await drainer.kill();
      }
    } finally {
      for (const h of holders.splice(0)) await release(h);
    }
  }
  toString = () => `a drainer process SIGKILLed in the middle of a fan-out (after ${this.chunks} chunk(s) committed, the next one waiting)`;
}
