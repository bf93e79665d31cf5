import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { annotations, findLiveAnnotations } from "@tether/annotations";
import { ValidationError } from "@tether/core";
import { META_FIELD, type EngineSink } from "@tether/search-sink";
import { LIMITS, present } from "../annotation-schemas.js";
import { HttpError } from "@tether/service-kit";

export interface SearchRouteDeps {
  db: Kysely<any>;
  /** Where searches go; undefined answers 503. */
  search: EngineSink | undefined;
  /** Timeout of the Elasticsearch query. */
  timeoutMs: number;
}

interface SearchQuery {
  uri?: string;
  user?: string;
  group?: string;
  q?: string;
  limit?: string;
  include_hidden?: "true" | "false";
}

const str = (maxLength: number) => ({ type: "string", minLength: 1, maxLength }) as const;

const searchQuerySchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    uri: str(LIMITS.uri),
    user: str(LIMITS.user),
    group: str(LIMITS.group),
    q: str(1_000),
    limit: { type: "string", maxLength: 10 },
    include_hidden: { type: "string", enum: ["true", "false"] },
  },
} as const;

export const SEARCH_DEFAULT_LIMIT = 20;
export const SEARCH_MAX_LIMIT = 200;

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return SEARCH_DEFAULT_LIMIT;
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > SEARCH_MAX_LIMIT) throw new ValidationError("limit", `must be an integer in 1..${SEARCH_MAX_LIMIT}`);
  return n;
}

/**
 * Search: Elasticsearch finds ids (newest first by `updated`), Postgres supplies the bodies.
 * Rows soft-deleted in Postgres are dropped even if their tombstone has not reached the index
 * yet, so a deleted annotation never shows; an edit not yet synced shows its current body
 * but may be missing from (or wrongly included in) the matches until the drainer repairs it.
 * Annotations of hidden users (annotation_user.hidden) are left out unless
 * `include_hidden=true`: by the documents' `user_hidden` (a document without it is not hidden),
 * and by Postgres too, so a user hidden a moment ago is gone before the drainer has re-synced
 * every annotation of theirs.
 */
export async function searchRoutes(app: FastifyInstance, { db, search, timeoutMs }: SearchRouteDeps): Promise<void> {
  app.get<{ Querystring: SearchQuery }>("/api/search", { schema: { querystring: searchQuerySchema } }, async (request) => {
    const { uri, user, group, q } = request.query;
    const limit = parseLimit(request.query.limit);
    const withHidden = request.query.include_hidden === "true";
    if (!search) throw new HttpError("search_unavailable", "search is not configured");
    const filter: unknown[] = [{ term: { [`${META_FIELD}.deleted`]: false } }];
    if (uri !== undefined) filter.push({ term: { uri } });
    if (user !== undefined) filter.push({ term: { user } });
    if (group !== undefined) filter.push({ term: { group } });

    let res;
    try {
      res = await search.searchIds(
        annotations.index,
        {
          _source: false,
          size: limit,
          track_total_hits: true,
          query: { bool: { filter, ...(q !== undefined ? { must: [{ match: { text: q } }] } : {}), ...(withHidden ? {} : { must_not: [{ term: { user_hidden: true } }] }) } },
          sort: [{ updated: { order: "desc", unmapped_type: "date" } }, { [`${META_FIELD}.key`]: { order: "desc", unmapped_type: "long" } }],
        },
        { timeoutMs },
      );
    } catch (err) {
      // The driver's text names the cluster's address: it goes to the log, never to the caller.
      request.log.warn({ err: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }, "search failed");
      throw new HttpError("search_unavailable", "search is unavailable; retry later", { cause: err });
    }

    // Only ids Postgres can compare against; a stray non-numeric id cannot be an annotation.
    const ids = res.ids.filter((id) => /^[0-9]{1,19}$/.test(id));
    const rows = await findLiveAnnotations(db, ids, { withHidden });
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    const ordered = ids.flatMap((id) => {
      const row = byId.get(id);
      return row ? [present(row)] : [];
    });
    // Hits Postgres no longer has (deleted since) do not count.
    return { total: Math.max(0, res.total - (res.ids.length - ordered.length)), rows: ordered };
  });
}
