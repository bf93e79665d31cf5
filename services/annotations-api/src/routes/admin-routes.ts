import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { sendErrorBody } from "@tether/service-kit";
import { enqueueReindex, evaluateAlerts, queueStats, ValidationError, type AlertThresholds, type Collection, type ReindexRequest } from "@tether/core";

export type AlertThresholdOverrides = AlertThresholds | undefined;

export interface AdminRouteDeps {
  db: Kysely<any>;
  /** The collections of tether.config.ts that `POST /admin/reindex` may target (by `collection`). */
  collections: readonly Collection<any>[];
  /** Bearer token; undefined disables every admin route (503). */
  adminToken: string | undefined;
  alertThresholds: AlertThresholdOverrides;
}

// An id list of 100k ids is ~2 MB of JSON: the admin re-index takes more than the API's default.
const REINDEX_BODY_LIMIT = 8 * 1024 * 1024;

const reindexBodySchema = {
  type: "object",
  additionalProperties: false,
  required: ["scope"],
  properties: {
    collection: { type: "string", minLength: 1, maxLength: 64 },
    scope: { type: "string", minLength: 1, maxLength: 64 },
    value: { type: "string", minLength: 1, maxLength: 1024 },
    from: { type: "string", minLength: 1, maxLength: 64 },
    to: { type: "string", minLength: 1, maxLength: 64 },
    ids: {
      type: "array",
      minItems: 1,
      maxItems: 100_000,
      // Strings or JSON integers; each one is checked by the collection's id rule (core), which
      // names the offending item ("ids.3").
      items: { type: ["string", "integer"], maxLength: 200 },
    },
    force: { type: "boolean" },
    priority: { type: "integer", minimum: 0, maximum: 1_000_000 },
    tag: { type: "string", minLength: 1, maxLength: 200 },
  },
} as const;

interface ReindexBody {
  collection?: string;
  scope: string;
  value?: string;
  from?: string;
  to?: string;
  ids?: (string | number)[];
  force?: boolean;
  priority?: number;
  tag?: string;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Admin routes, behind `Authorization: Bearer $TETHER_ADMIN_TOKEN` (constant-time compare). */
export async function adminRoutes(app: FastifyInstance, { db, collections, adminToken, alertThresholds }: AdminRouteDeps): Promise<void> {
  // The target of a re-index: `collection` names one of the config's, else the only one there is.
  const pick = (name: string | undefined): Collection<any> => {
    const found = name === undefined ? (collections.length === 1 ? collections[0] : undefined) : collections.find((c) => c.name === name);
    if (found) return found;
    throw new ValidationError("collection", name === undefined ? `required: one of ${collections.map((c) => c.name).join(", ")}` : `unknown collection "${name}"`);
  };
  const expected = adminToken === undefined ? undefined : digest(adminToken);
  app.addHook("onRequest", async (request, reply) => {
    if (!expected) {
      return sendErrorBody(reply, 503, { error: "admin_disabled", message: "admin routes are disabled: TETHER_ADMIN_TOKEN is not set" });
    }
    const header = request.headers.authorization ?? "";
    const m = /^Bearer\s+(.+)$/i.exec(header);
    if (!m || !timingSafeEqual(digest(m[1]!.trim()), expected)) {
      return sendErrorBody(reply, 401, { error: "unauthorized", message: "a valid admin bearer token is required" }, { "www-authenticate": 'Bearer realm="tether-admin"' });
    }
  });

  /**
   * Enqueues one sync job per matching annotation with a single INSERT … SELECT.
   * Scopes: user | group (exact match on the owner / group id; an unknown one is a 404, not
   * "0 jobs"), updated | created (a range on that column: `updated` is the last-modified time,
   * `created` the creation time; `from` inclusive, `to` exclusive, ISO-8601, either may be
   * omitted), ids (a list; ids without a row still get a job so a stray document is removed),
   * all. Defaults: priority 100 for user/group, 1000 for dates/ids/all (live traffic is 1);
   * tag "reindex" (tags must start with "reindex", so admin work never trips the live-queue alert).
   */
  app.post<{ Body: ReindexBody }>("/admin/reindex", { bodyLimit: REINDEX_BODY_LIMIT, schema: { body: reindexBodySchema } }, async (request) => {
    const b = request.body;
    const req: ReindexRequest = {
      scope: b.scope,
      ...(b.value !== undefined ? { value: b.value } : {}),
      ...(b.from !== undefined ? { from: b.from } : {}),
      ...(b.to !== undefined ? { to: b.to } : {}),
      ...(b.ids !== undefined ? { ids: b.ids.map(String) } : {}),
      ...(b.force !== undefined ? { force: b.force } : {}),
      ...(b.priority !== undefined ? { priority: b.priority } : {}),
      ...(b.tag !== undefined ? { tag: b.tag } : {}),
    };
    return enqueueReindex(db, pick(b.collection), req);
  });

  /** Counts by name, tag and priority; due, future, expired, parked; oldest due age; paused lanes. */
  app.get("/admin/queue", async () => queueStats(db));

  app.get("/admin/alerts", async () => evaluateAlerts(db, alertThresholds));
}
