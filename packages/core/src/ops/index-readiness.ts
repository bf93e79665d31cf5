import type { Collection } from "../collection.js";
import type { MappingProblem, Sink, SinkCallOptions } from "../sink.js";
import { SinkPermissionError } from "../sink-refusal.js";
import { ConnectionSettingError } from "../config/connection-setting-error.js";

/**
 * Terminology
 * - ready: the collection's index exists (behind its alias, or a concrete index of that name
 *   made before Tether put indices behind aliases) and its mapping has every declared field with
 *   the declared type.
 * - mapping_differs: the index exists, but its mapping lacks declared fields or maps them
 *   otherwise (an index the engine created with guessed mappings, or a mapping changed in the
 *   config since): searches on those fields answer wrongly. Fix: `tether rebuild <collection>`.
 * - missing: nothing holds the name. Writes keep their jobs (retryable) until `tether migrate`
 *   creates it.
 * - unreachable: the engine did not answer within the caller's bound (or answered with an error).
 * - forbidden: the engine refused the process a privilege it needs to create or check the index
 *   (HTTP 403): it answers; the fix is the role (`privilege`, and `error` says which role).
 */
export type IndexState = "created" | "ready" | "mapping_differs" | "missing" | "unreachable" | "forbidden" | "unchecked";

export interface IndexReport {
  collection: string;
  index: string;
  state: IndexState;
  /** How the name is held, when present. */
  layout?: "alias" | "index";
  problems: MappingProblem[];
  /** What to run, when something is wrong. */
  fix?: string;
  error?: string;
  /** With `forbidden`: the privilege to grant, on `refusedIndex` (the concrete name, with its prefix). */
  privilege?: string;
  refusedIndex?: string;
}

export interface IndexReadinessOptions {
  /** Create a missing index behind its alias with the declared mapping (`tether migrate`). Default false. */
  create?: boolean;
  /** Bounds of each call to the engine (the caller's deadline). */
  call?: SinkCallOptions;
  /** Throw the engine's error instead of reporting the collection `unreachable`. Default false. */
  rethrow?: boolean;
}

/**
 * Checks (and with `create`, creates) each collection's index: what `tether migrate`, `tether
 * status` and the drainer's start-up log report. Never throws for an engine that does not
 * answer: that collection reads `unreachable` with the error (which names the bound), or
 * `forbidden` with the refused privilege.
 *
 * @example
 * const reports = await indexReadiness(sink, config.collections, { create: true });
 * for (const r of reports) if (r.fix) console.warn(describeIndexReport(r));
 */
export async function indexReadiness(sink: Sink, collections: readonly Collection<any>[], opts: IndexReadinessOptions = {}): Promise<IndexReport[]> {
  const out: IndexReport[] = [];
  for (const c of collections) {
    const base = { collection: c.name, index: c.index, problems: [] as MappingProblem[] };
    if (!sink.checkIndex) {
      if (opts.create) await sink.ensureIndex(c.index, c.mappings);
      out.push({ ...base, state: "unchecked" });
      continue;
    }
    try {
      const created = opts.create && sink.provisionIndex ? (await sink.provisionIndex(c.index, c.mappings, opts.call)).created : false;
      const check = await sink.checkIndex(c.index, c.mappings, opts.call);
      if (check.kind === "missing") out.push({ ...base, state: "missing", fix: "run `tether migrate` to create it" });
      else if (check.problems.length > 0) out.push({ ...base, state: "mapping_differs", layout: check.layout, problems: check.problems, fix: `run \`tether rebuild ${c.name}\`` });
      else out.push({ ...base, state: created ? "created" : "ready", layout: check.layout });
    } catch (err) {
      // A connection setting that cannot work with this node is the process's to refuse, not a state of the index.
      if (opts.rethrow || err instanceof ConnectionSettingError) throw err;
      const refused = SinkPermissionError.in(err);
      if (refused) {
        const { privilege, index } = refused.refusal;
        out.push({ ...base, state: "forbidden", error: refused.message, privilege, ...(index ? { refusedIndex: index } : {}) });
      } else out.push({ ...base, state: "unreachable", error: err instanceof Error ? err.message : String(err) });
    }
  }
  return out;
}

/** One line (or a few) for a report: what is wrong and the fix. */
export function describeIndexReport(r: IndexReport): string {
  const head = `${r.collection} (index ${r.index}): `;
  switch (r.state) {
    case "created":
      return `${head}created behind its alias with the declared mapping`;
    case "ready":
      return `${head}ready${r.layout === "index" ? " (a concrete index, not behind an alias: `tether rebuild` moves it behind one)" : ""}`;
    case "unchecked":
      return `${head}the sink cannot check its index`;
    case "missing":
      return `${head}missing: writes keep their jobs until it exists; ${r.fix}`;
    case "unreachable":
      return `${head}could not be checked: ${r.error}`;
    case "forbidden":
      return `${head}${r.error}`;
    case "mapping_differs": {
      const fields = r.problems.map((p) => (p.actual === null ? `${p.field} is not mapped (declared ${p.declared})` : `${p.field} is ${p.actual}, declared ${p.declared}`));
      return `${head}mapping differs from the declared one: ${fields.join("; ")}; ${r.fix}`;
    }
  }
}
