import type { Kysely } from "kysely";
import type { Collection } from "../collection.js";
import { NotFoundError, ValidationError } from "../errors.js";
import { canonicalEntityId } from "../entity-id.js";
import { REINDEX_TAG_PREFIX } from "../job.js";
import { instruments } from "../ops/metrics.js";
import { notifyWake } from "../wake/wake-store.js";
import { entityIdsQuery, idColumnType, type EntityFilter } from "../store/collection-store.js";
import { insertJobsSelecting } from "../store/job-store.js";
import { textProblem } from "../text-value.js";
import { parseTimestampBound } from "../timestamp-bound.js";
import { PG_DATA_EXCEPTION_CLASS } from "../pg-error-codes.js";

/** An admin re-index request. `scope` names one of the collection's reindex scopes, or "all". */
export interface ReindexRequest {
  scope: string;
  /** For `equals` scopes. */
  value?: string;
  /** For `range` scopes: ISO timestamps, `from` inclusive, `to` exclusive. */
  from?: string;
  to?: string;
  /** For `ids` scopes. */
  ids?: readonly string[];
  /** Rewrite even entities that look current (still verified before the job is deleted). */
  force?: boolean;
  /** Default: 100 for `equals` scopes, 1000 otherwise (live traffic is 1). */
  priority?: number;
  /** Default "reindex". Must start with "reindex" so it never trips the live queue alert. */
  tag?: string;
}

export interface ReindexResult {
  enqueued: number;
  priority: number;
  tag: string;
}

const MAX_IDS = 100_000;

async function checkIds(db: Kysely<any>, collection: Collection<any>, ids: readonly unknown[]): Promise<string[]> {
  const type = await idColumnType(db, collection);
  return ids.map((id, i) => {
    const c = canonicalEntityId(type, id);
    if ("error" in c) throw new ValidationError(`ids.${i}`, `${c.error} (${collection.name})`);
    return c.id;
  });
}

/**
 * Enqueues one job per matching entity with a single parameterized `INSERT … SELECT` (never a
 * row-by-row loop, never values pasted into SQL). Soft-deleted rows are included: their
 * tombstones are verified too.
 *
 * @example
 * await enqueueReindex(db, annotations, { scope: "user", value: "acct:ann@example.com" });
 * await enqueueReindex(db, annotations, { scope: "updated", from: "2026-01-01T00:00:00Z", to: "2026-02-01T00:00:00Z" });
 */
export async function enqueueReindex(db: Kysely<any>, collection: Collection<any>, req: ReindexRequest): Promise<ReindexResult> {
  const scopes = collection.reindexScopes;
  // Own keys only: "constructor" or "__proto__" must not resolve to something on Object.prototype.
  const scope = req.scope === "all" ? { kind: "all" as const } : typeof req.scope === "string" && Object.hasOwn(scopes, req.scope) ? scopes[req.scope] : undefined;
  if (!scope) {
    throw new ValidationError("scope", `unknown scope "${String(req.scope)}"; known: ${["all", ...Object.keys(scopes)].join(", ")}`);
  }
  // A filter the scope ignores is a mistake (e.g. `from` with scope "user"): say so, never widen the scope.
  const uses: Record<string, readonly string[]> = { all: [], equals: ["value"], range: ["from", "to"], ids: ["ids"] };
  for (const field of ["value", "from", "to", "ids"] as const) {
    if (req[field] !== undefined && !uses[scope.kind]!.includes(field)) throw new ValidationError(field, `does not apply to scope "${req.scope}"`);
  }
  const priority = req.priority ?? (scope.kind === "equals" ? 100 : 1000);
  if (!Number.isInteger(priority) || priority < 0 || priority > 1_000_000) throw new ValidationError("priority", "must be an integer in 0..1000000");
  const tag = req.tag ?? REINDEX_TAG_PREFIX;
  if (typeof tag !== "string" || !tag.startsWith(REINDEX_TAG_PREFIX) || tag.length > 200) {
    throw new ValidationError("tag", `must start with "${REINDEX_TAG_PREFIX}" (admin work never counts as live traffic)`);
  }
  const tagProblem = textProblem(tag);
  if (tagProblem) throw new ValidationError("tag", tagProblem);
  if (req.force !== undefined && typeof req.force !== "boolean") throw new ValidationError("force", "must be a boolean");
  let filter: EntityFilter;
  if (scope.kind === "ids") {
    if (!Array.isArray(req.ids) || req.ids.length === 0) throw new ValidationError("ids", "must be a non-empty array");
    if (req.ids.length > MAX_IDS) throw new ValidationError("ids", `at most ${MAX_IDS} ids per request`);
    filter = { kind: "ids", ids: await checkIds(db, collection, req.ids) };
  } else if (scope.kind === "all") {
    filter = { kind: "all" };
  } else if (scope.kind === "equals") {
    if (typeof req.value !== "string" || req.value.length === 0) throw new ValidationError("value", `scope "${req.scope}" needs a non-empty value`);
    const valueProblem = textProblem(req.value);
    if (valueProblem) throw new ValidationError("value", valueProblem);
    filter = { kind: "equals", column: scope.column, value: req.value };
  } else {
    if (req.from === undefined && req.to === undefined) throw new ValidationError("from", `scope "${req.scope}" needs from and/or to`);
    const from = req.from === undefined ? undefined : parseTimestampBound("from", req.from);
    const to = req.to === undefined ? undefined : parseTimestampBound("to", req.to);
    if (from && to && from.getTime() >= to.getTime()) throw new ValidationError("to", "must be after from");
    filter = { kind: "range", column: scope.column, from, to };
  }
  let enqueued: number;
  try {
    enqueued = await insertJobsSelecting(db, { name: collection.jobName, priority, tag, force: req.force === true }, entityIdsQuery(collection, filter));
  } catch (err) {
    // An equality value the column's type cannot hold ("herbal" for a uuid or integer column):
    // the caller's mistake, not a failure of the re-index.
    if (scope.kind === "equals" && String((err as { code?: unknown }).code ?? "").startsWith(PG_DATA_EXCEPTION_CLASS)) {
      throw new ValidationError("value", `not a value of column ${scope.column}: ${(err as Error).message}`);
    }
    throw err;
  }
  if (enqueued === 0 && scope.kind === "equals") {
    // Nothing was inserted, so nothing to roll back; a typo in a user name must not look like success.
    throw new NotFoundError(`${collection.name} with ${scope.column} = ${JSON.stringify(req.value)}`);
  }
  if (enqueued > 0) {
    await notifyWake(db, collection.jobName);
    instruments().jobsEnqueued.add(enqueued, { name: collection.jobName, tag, priority });
  }
  return { enqueued, priority, tag };
}
