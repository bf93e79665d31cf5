import { sql } from "kysely";
import { waitFor } from "@tether/testkit";
import type { HistoryCommand } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import { startTether } from "./history-processes.js";
import type { HistorySystem } from "./history-system.js";

/** Each live product's version, by id. */
async function productVersions(sys: HistorySystem): Promise<Map<string, string>> {
  const r = await sql<{ id: string; version: string }>`SELECT id::text AS id, version::text AS version FROM shop_product WHERE deleted_at IS NULL`.execute(sys.db);
  return new Map(r.rows.map((x) => [x.id, x.version]));
}

/** Whether a `tether` process of this history has a session open in its database. */
async function connected(sys: HistorySystem): Promise<boolean> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tether-cli'`.execute(sys.db);
  return Number(r.rows[0]!.n) > 0;
}

/**
 * A drainer process (`tether drain --until-empty`, one document per expansion chunk) SIGKILLed in
 * the middle of a fan-out: once `chunks` documents have been bumped since it started (each bump
 * committed by its chunk's transaction, with its sync job and the fan-out's saved progress) it
 * is killed wherever it is: in the next chunk's transaction, in a sync pass, or between them.
 * With 0 it is killed as soon as it has a session open. (The drainer never waits for a row an
 * application holds, so a held row cannot pin it mid-chunk: the kill lands where the drainer is.)
 * Skipped when no fan-out job is due.
 */
export class KilledFanoutDrainer implements HistoryCommand {
  constructor(readonly chunks: 0 | 1 | 2) {}
  check = () => true;
  async run(_m: HistoryModel, sys: HistorySystem) {
    const due = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE starts_with(name, 'fanout_') AND scheduled_at <= now()`.execute(sys.db);
    if (Number(due.rows[0]!.n) === 0) return;
    const before = await productVersions(sys);
    const drainer = startTether(sys, ["drain", "--until-empty", "--timeout", "120"]);
    let exited = false;
    void drainer.done.then(() => (exited = true));
    const bumped = async () => {
      let n = 0;
      for (const [id, version] of await productVersions(sys)) if (before.get(id) !== version) n += 1;
      return n;
    };
    try {
      await waitFor(async () => exited || (this.chunks === 0 ? await connected(sys) : (await bumped()) >= this.chunks), {
        what: `the drainer to bump ${this.chunks} document(s) of the fan-out, or its run to end`,
        timeoutMs: 60_000,
        intervalMs: 5,
      }).catch(() => undefined);
    } finally {
      await drainer.kill();
    }
  }
  toString = () => `a drainer process SIGKILLed in the middle of a fan-out (after ${this.chunks} document(s) bumped)`;
}
