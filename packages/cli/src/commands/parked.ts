import { InvalidArgumentError, type Command } from "commander";
import { listDeadJobs, retryDeadJobs, type DeadJob, type DeadReason } from "@tether/core/internal";
import { UsageError } from "../cli-errors.js";
import { intOption, listOption, output, table, withCommonOptions, withContext, type CommonOptions } from "../command-kit.js";

interface ListOptions extends CommonOptions {
  reason?: DeadReason;
  name?: string;
  limit?: number;
}

interface RetryOptions extends CommonOptions {
  ids?: string[];
  all?: boolean;
  name?: string;
  reason?: DeadReason;
}

function reasonOption(raw: string): DeadReason {
  if (raw !== "parked" && raw !== "expired") throw new InvalidArgumentError('must be "parked" or "expired"');
  return raw;
}

const entityId = (j: DeadJob) => {
  const id = (j.kwargs as { id?: unknown } | null)?.id;
  return id === undefined ? "" : String(id);
};

function render(total: number, jobs: DeadJob[]): string {
  if (jobs.length === 0) return "no dead-letter jobs match";
  const rows = jobs.map((j) => [j.id, j.name, entityId(j), j.tag, j.priority, j.attempts, j.reason, j.deadAt, (j.lastError ?? "").replace(/\s+/g, " ").slice(0, 80)]);
  return `${table(["ID", "NAME", "ENTITY", "TAG", "PRIORITY", "ATTEMPTS", "REASON", "DEAD AT", "LAST ERROR"], rows)}\n${jobs.length} of ${total} shown`;
}

/** `tether parked list | retry`: the dead-letter table (parked and expired jobs). */
export function registerParked(program: Command): void {
  const parked = program.command("parked").description("list or retry dead-letter jobs (parked after permanent failures, or expired)");

  withCommonOptions(
    parked
      .command("list")
      .description("show dead-letter jobs, newest first")
      .option("--reason <reason>", "parked | expired (default: both)", reasonOption)
      .option("--name <name>", "only this job name")
      .option("--limit <n>", "rows to show (default 100)", intOption(1, 10_000)),
  ).action(async (opts: ListOptions) => {
    const result = await withContext(opts, (ctx) =>
      listDeadJobs(ctx.db, {
        ...(opts.reason ? { reason: opts.reason } : {}),
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
      }),
    );
    output(opts, result, () => render(result.total, result.jobs));
  });

  withCommonOptions(
    parked
      .command("retry")
      .description("move dead-letter jobs back into the queue: due now, fresh expiry, attempts reset")
      .option("--ids <a,b,c>", "dead-letter ids (the ID column of `parked list`)", listOption)
      .option("--all", "every dead-letter job matching --name / --reason")
      .option("--name <name>", "only this job name")
      .option("--reason <reason>", "parked | expired (default: both)", reasonOption),
  ).action(async (opts: RetryOptions) => {
    if ((opts.ids === undefined) === !opts.all) throw new UsageError("pass exactly one of --ids and --all");
    const result = await withContext(opts, (ctx) =>
      retryDeadJobs(ctx.db, {
        ...(opts.ids ? { ids: opts.ids } : { all: true }),
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.reason ? { reason: opts.reason } : {}),
      }),
    );
    output(opts, result, () => `moved ${result.retried} job(s) back into the queue`);
  });
}
