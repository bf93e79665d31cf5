import { sql } from "kysely";
import type { FaultMode } from "@tether/testkit";
import { waitFor } from "@tether/testkit";
import type { HistoryCommand } from "./history-command.js";
import type { HistoryModel } from "./history-model.js";
import { startTether } from "./history-processes.js";
import type { HistorySystem } from "./history-system.js";

/** The faults a history injects, on the writer's direct syncs or the drainers' engine calls. */
export const FAULTS: Record<string, FaultMode> = {
  pass: { kind: "pass" },
  hang: { kind: "hang" },
  "429": { kind: "status", status: 429 },
  "503": { kind: "status", status: 503 },
  "200 dropping half the items": { kind: "dropBulkItems", fraction: 0.5, forge: true },
  "late (bulks delivered late, reordered)": { kind: "latency", ms: 400, jitterMs: 600 },
};

export class SetFault implements HistoryCommand {
  constructor(readonly target: "writer" | "drainer", readonly fault: keyof typeof FAULTS & string) {}
  check = () => true;
  async run(_m: HistoryModel, sys: HistorySystem) {
    await (this.target === "writer" ? sys.writerProxy : sys.drainerProxy).setMode(FAULTS[this.fault]!);
  }
  toString = () => `fault on the ${this.target}'s engine calls: ${this.fault}`;
}

/** Drain passes of the two in-process drainers, side by side; left running in the background or awaited. */
export class DrainPasses implements HistoryCommand {
  constructor(readonly drainers: 1 | 2, readonly background: boolean) {}
  check = () => true;
  async run(_m: HistoryModel, sys: HistorySystem) {
    const done = Promise.all(sys.drainers.slice(0, this.drainers).map((d) => d.drainOnce()));
    // Handled here, judged when the history settles (a failed pass is an outcome under faults).
    done.catch(() => undefined);
    if (this.background) sys.background.push({ label: this.toString(), done });
    else await done;
  }
  toString = () => `${this.drainers} drain pass(es) side by side${this.background ? ", left running" : ""}`;
}

/**
 * Drain passes while the drainers' engine calls meet a fault, lifted afterwards: a pass must
 * confirm only what the engine holds (the forged 200 answers "created" for items it dropped).
 */
export class DrainUnderFault implements HistoryCommand {
  constructor(readonly fault: keyof typeof FAULTS & string, readonly drainers: 1 | 2) {}
  check = () => true;
  async run(_m: HistoryModel, sys: HistorySystem) {
    await sys.drainerProxy.setMode(FAULTS[this.fault]!);
    try {
      await Promise.all(sys.drainers.slice(0, this.drainers).map((d) => d.drainOnce()));
    } finally {
      await sys.drainerProxy.setMode(FAULTS.pass!);
    }
  }
  toString = () => `${this.drainers} drain pass(es) while the engine calls meet: ${this.fault}; then the fault lifted`;
}

async function dueJobs(sys: HistorySystem): Promise<number> {
  const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job WHERE scheduled_at <= now()`.execute(sys.db);
  return Number(r.rows[0]!.n);
}

/**
 * A drain pass in a process of its own (`tether drain --once`) whose bulks are slow, SIGKILLed
 * once its bulk has left (or when its pass ended with nothing to write): its transaction dies,
 * the bulk lands late.
 */
export class KilledDrainer implements HistoryCommand {
  check = () => true;
  async run(_m: HistoryModel, sys: HistorySystem) {
    if ((await dueJobs(sys)) === 0) return;
    const before = sys.lateProxy.stats.bulkRequests;
    const drainer = startTether(sys, ["drain", "--once"], sys.lateProxy.url);
    let exited = false;
    void drainer.done.then(() => (exited = true));
    try {
      await waitFor(() => sys.lateProxy.stats.bulkRequests > before || exited, {
        what: "the drainer's bulk to leave, or its pass to end",
        timeoutMs: 60_000,
        intervalMs: 10,
      }).catch(() => undefined);
    } finally {
      await drainer.kill();
    }
  }
  toString = () => "a drainer process SIGKILLed after its bulk left (the bulk lands late)";
}

/** `tether verify` (or `--deep`), enqueuing repairs, started and left running. */
export class CliVerify implements HistoryCommand {
  constructor(readonly deep: boolean) {}
  check = () => true;
  async run(_m: HistoryModel, sys: HistorySystem) {
    const p = startTether(sys, ["verify", ...(this.deep ? ["--deep"] : []), "--json"]);
    sys.background.push({ label: this.toString(), done: p.done, stop: p.kill });
  }
  toString = () => `tether verify${this.deep ? " --deep" : ""}, left running`;
}

/** `tether rebuild <collection>`, started and left running while the history goes on. */
export class CliRebuild implements HistoryCommand {
  constructor(readonly collection: string) {}
  check = () => true;
  async run(_m: HistoryModel, sys: HistorySystem) {
    const p = startTether(sys, ["rebuild", this.collection, "--json"]);
    sys.background.push({ label: this.toString(), done: p.done, stop: p.kill });
  }
  toString = () => `tether rebuild ${this.collection}, left running`;
}
