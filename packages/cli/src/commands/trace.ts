import type { Command } from "commander";
import { ValidationError } from "@tether/core";
import { traceEntity, viaText, type EntityTrace } from "@tether/core/internal";
import { CommandFailedError, UsageError } from "../cli-errors.js";
import { output, pickCollection, table, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

const version = (n: number | null) => (n === null ? "-" : `v${n}`);
const clip = (s: string | null | undefined, n = 100) => (s ? (s.length > n ? `${s.slice(0, n - 1)}…` : s) : "-");

function side(exists: boolean, v: number | null, deleted: boolean): string {
  if (!exists) return "no row";
  return `${version(v)}${deleted ? ", deleted" : ", live"}`;
}

function downstreamLine(t: EntityTrace): string {
  const d = t.downstream;
  if (!d.reachable) return `could not be asked: ${d.error ?? "unknown error"}`;
  if (!d.exists) return "no document";
  const content = d.contentMatches === null ? "" : d.contentMatches ? ", content matches the row" : ", content differs from the row";
  return `${version(d.version)}${d.deleted ? ", tombstone" : ", live"}${content}`;
}

/** The trace as the console's page shows it, in text: the verdict, both sides, jobs, events, fan-outs. */
export function renderTrace(t: EntityTrace): string {
  const lines = [
    `${t.collection} ${t.id} (index ${t.index}): ${t.verdict}`,
    `  ${t.explanation}`,
    `postgres:   ${side(t.postgres.exists, t.postgres.version, t.postgres.deleted)}`,
    `downstream: ${downstreamLine(t)}`,
  ];
  if (t.repair) lines.push(`repair:     tether reindex --collection ${t.collection} --scope ids --ids ${t.id}${t.repair.force ? " --force" : ""} (${t.repair.note})`);
  lines.push("", t.pendingJobs.length === 0 ? "pending jobs: none" : "pending jobs:");
  if (t.pendingJobs.length > 0) {
    lines.push(
      table(
        ["JOB", "TAG", "PRIORITY", "STATE", "ATTEMPTS", "SCHEDULED", "LAST ERROR", "VIA"],
        t.pendingJobs.map((j) => [j.id, j.tag, j.priority, j.state, j.attempts, j.scheduledAt, clip(j.lastError), j.via ? viaText(j.via) : "-"]),
      ),
    );
  }
  lines.push("", t.deadJobs.length === 0 ? "dead jobs: none" : "dead jobs:");
  if (t.deadJobs.length > 0) lines.push(table(["JOB", "REASON", "ATTEMPTS", "LAST ERROR"], t.deadJobs.map((j) => [j.id, j.reason, j.attempts, clip(j.lastError)])));
  if (t.fanout.fanouts.length > 0 || t.fanout.pendingChanges.length > 0) {
    lines.push("", "fan-out (tables the document reads):");
    if (t.fanout.pendingChanges.length > 0) {
      lines.push(table(["EMBED", "CHANGE", "AT", "FAN-OUT"], t.fanout.pendingChanges.map((c) => [c.embed, `${c.table}.${c.column} = ${c.value}`, c.changedAt, c.fanout])));
    }
    if (t.fanout.fanouts.length > 0) {
      lines.push(table(["FAN-OUT JOB", "EMBED", "LINK", "DONE/TOTAL", "STATE", "REACHED"], t.fanout.fanouts.map((f) => [f.id, f.embed, f.link, `${f.done}/${f.total ?? "?"}`, f.state, f.reached ? "yes" : "no"])));
    }
  }
  lines.push("", t.events.length === 0 ? "events: none" : "events (newest first):");
  if (t.events.length > 0) lines.push(table(["AT", "KIND", "JOB", "TAG", "DETAIL"], t.events.map((e) => [e.at, e.kind, e.jobId ?? "-", e.tag ?? "-", clip(e.detail ?? (e.via ? viaText(e.via) : null))])));
  return lines.join("\n");
}

/**
 * `tether trace <collection> <id>`: the admin console's entity trace (core's `traceEntity`, the
 * one definition both read) — why X is or is not in the downstream.
 */
export function registerTrace(program: Command): void {
  withCommonOptions(
    program
      .command("trace")
      .description(
        "why is an entity (not) in the downstream? both sides' versions, whether the document's content matches the row, its pending and dead jobs, fan-outs still to reach it, its recent history and the re-index that repairs it (the admin console's trace)",
      )
      .argument("<collection>", "the collection's name")
      .argument("<id>", "the entity's id, as the writer takes it"),
  ).action(async (name: string, id: string, opts: CommonOptions) => {
    const trace = await withContext(opts, async (ctx) => {
      const collection = pickCollection(ctx, name);
      try {
        return await traceEntity(ctx.db, ctx.sink, collection, id);
      } catch (err) {
        if (err instanceof ValidationError) throw new UsageError(`${collection.name} id "${id}": ${err.message}`);
        throw err;
      }
    });
    output(opts, trace, () => renderTrace(trace));
    // The downstream could not be asked: the trace is incomplete, as any verb whose engine fails.
    if (trace.verdict === "unknown") throw new CommandFailedError(`the trace is incomplete: ${trace.downstream.error ?? "the downstream could not be asked"}`);
  });
}
