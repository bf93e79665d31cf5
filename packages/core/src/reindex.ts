import { sql, type Kysely, type RawBuilder } from "kysely";
import type { Collection } from "./collection.js";
import { NotFoundError, ValidationError } from "./errors.js";
import { REINDEX_TAG_PREFIX } from "./job.js";

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

function isoOrThrow(field: string, v: unknown): string {
  if (typeof v !== "string" || Number.isNaN(Date.parse(v))) throw new ValidationError(field, "must be an ISO-8601 timestamp");
  return new Date(v).toISOString();
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
  const scope = req.scope === "all" ? { kind: "all" as const } : scopes[req.scope];
  if (!scope) {
    throw new ValidationError("scope", `unknown scope "${String(req.scope)}"; known: ${["all", ...Object.keys(scopes)].join(", ")}`);
  }
  const priority = req.priority ?? (scope.kind === "equals" ? 100 : 1000);
  if (!Number.isInteger(priority) || priority < 0 || priority > 1_000_000) throw new ValidationError("priority", "must be an integer in 0..1000000");
  const tag = req.tag ?? REINDEX_TAG_PREFIX;
  if (typeof tag !== "string" || !tag.startsWith(REINDEX_TAG_PREFIX) || tag.length > 200) {
    throw new ValidationError("tag", `must start with "${REINDEX_TAG_PREFIX}" (admin work never counts as live traffic)`);
  }
  if (req.force !== undefined && typeof req.force !== "boolean") throw new ValidationError("force", "must be a boolean");
  const kwargsExtra = req.force ? sql`|| '{"force": true}'::jsonb` : sql``;
  const table = sql.table(collection.table);
  const idRef = sql.ref(`t.${collection.idColumn}`);

  let source: RawBuilder<unknown>;
  if (scope.kind === "ids") {
    if (!Array.isArray(req.ids) || req.ids.length === 0) throw new ValidationError("ids", "must be a non-empty array");
    if (req.ids.length > MAX_IDS) throw new ValidationError("ids", `at most ${MAX_IDS} ids per request`);
    for (const id of req.ids) if (typeof id !== "string" || !/^[A-Za-z0-9_:.-]{1,200}$/.test(id)) throw new ValidationError("ids", `invalid id ${JSON.stringify(id)}`);
    // Every given id, present or not: a hard-deleted entity still needs its document removed.
    source = sql`SELECT DISTINCT u.id FROM unnest(${[...req.ids]}::text[]) AS u(id)`;
  } else {
    let where: RawBuilder<unknown>;
    if (scope.kind === "all") where = sql`true`;
    else if (scope.kind === "equals") {
      if (typeof req.value !== "string" || req.value.length === 0) throw new ValidationError("value", `scope "${req.scope}" needs a non-empty value`);
      where = sql`${sql.ref(`t.${scope.column}`)} = ${req.value}`;
    } else {
      if (req.from === undefined && req.to === undefined) throw new ValidationError("from", `scope "${req.scope}" needs from and/or to`);
      const from = req.from === undefined ? undefined : isoOrThrow("from", req.from);
      const to = req.to === undefined ? undefined : isoOrThrow("to", req.to);
      if (from && to && from >= to) throw new ValidationError("to", "must be after from");
      const col = sql.ref(`t.${scope.column}`);
      where = sql`${from ? sql`${col} >= ${from}::timestamptz` : sql`true`} AND ${to ? sql`${col} < ${to}::timestamptz` : sql`true`}`;
    }
    source = sql`SELECT ${idRef}::text AS id FROM ${table} AS t WHERE ${where}`;
  }
  const r = await sql`
    INSERT INTO tether.job (name, priority, tag, kwargs)
    SELECT ${collection.jobName}, ${priority}, ${tag}, jsonb_build_object('id', s.id) ${kwargsExtra}
    FROM (${source}) AS s`.execute(db);
  const enqueued = Number(r.numAffectedRows ?? 0);
  if (enqueued === 0 && scope.kind === "equals") {
    throw new NotFoundError(`no ${collection.name} with ${scope.column} = ${JSON.stringify(req.value)}`);
  }
  return { enqueued, priority, tag };
}
