import type { FastifyInstance } from "fastify";
import fc from "fast-check";
import { sql, type Kysely } from "kysely";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotationMigrations, annotations } from "@tether/annotations";
import { migrate } from "@tether/core";
import { ERROR_CODES } from "@tether/service-kit";
import { createTestContext, type TestContext } from "@tether/testkit";
import { buildApp } from "../../services/annotations-api/src/app.js";
import { startDrainerDaemon, type DrainerDaemon } from "../../services/drainer/src/index.js";
import { byIdRequests, createRequests, readOnlyRequests, reindexRequests, searchRequests, userRequests, type HostileRequest } from "./support/hostile-requests.js";

// Fixed unless overridden, so CI is reproducible and a failure can be replayed exactly.
const SEED = Number(process.env.TETHER_PROPERTY_SEED ?? 1_616_2026);
const RUNS = Number(process.env.TETHER_PROPERTY_RUNS ?? 100);
const TOKEN = "property-admin-token";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** What must hold for every answer, whatever was sent. */
function checkAnswer(req: HostileRequest, res: Answer): void {
  const what = `${req.method} ${req.url.slice(0, 200)}`;
  expect(res.status, what).toBeLessThan(500);
  // A stack frame ("    at Foo.bar (file:…)") starts after whitespace; prose such as "what differed (" must not count.
  expect(res.body, what).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|SQLSTATE|(?:^|\s)at [\w.<>$]+ \(/);
  if (res.status < 400 || req.method === "HEAD") return;
  expect(String(res.headers["content-type"]), what).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  const keys = Object.keys(body);
  expect(keys.every((k) => k === "error" || k === "field" || k === "message"), `${what}: ${res.body}`).toBe(true);
  expect(typeof body.message === "string" && body.message.length > 0, `${what}: ${res.body}`).toBe(true);
  expect(Object.hasOwn(ERROR_CODES, String(body.error)), `${what}: ${res.body}`).toBe(true);
  expect(ERROR_CODES[body.error as keyof typeof ERROR_CODES], `${what}: ${res.body}`).toBe(res.status);
  if (body.error === "validation") expect(typeof body.field === "string" && body.field.length > 0, `${what}: ${res.body}`).toBe(true);
  if (res.status === 405) expect(res.headers.allow, what).toBeTruthy();
}

/** Rows and jobs, enough to tell whether a request wrote anything. */
async function footprint(db: Kysely<any>): Promise<string> {
  const r = await sql<{ f: string }>`
    SELECT concat_ws('/', (SELECT count(*) FROM annotation), (SELECT coalesce(sum(version), 0) FROM annotation),
      (SELECT count(*) FROM annotation WHERE deleted_at IS NOT NULL), (SELECT count(*) FROM tether.job),
      (SELECT coalesce(max(id), 0) FROM tether.job),
      (SELECT coalesce(string_agg(md5(u::text), ',' ORDER BY u.userid), '') FROM annotation_user u),
      (SELECT coalesce(sum(version), 0) FROM tether.embed_change)) AS f`.execute(db);
  return r.rows[0]!.f;
}

/** Runs a property with the suite's seed; on failure the error names the seed to replay it. */
async function assertWithSeed(name: string, prop: fc.IAsyncProperty<[HostileRequest]>, numRuns: number): Promise<void> {
  try {
    await fc.assert(prop, { seed: SEED, numRuns, endOnFailure: true });
  } catch (err) {
    throw new Error(`property "${name}" failed with seed ${SEED} (replay: TETHER_PROPERTY_SEED=${SEED} TETHER_PROPERTY_RUNS=${numRuns}):\n${(err as Error).message}`, { cause: err });
  }
}

describe("hostile requests: every route of the API and the drainer answers < 500, in the error contract, and writes nothing on a 4xx", () => {
  let ctx: TestContext;
  let drainerCtx: TestContext;
  let app: FastifyInstance;
  let daemon: DrainerDaemon;
  let existing: string[];
  let sent = 0;
  const statuses = new Map<number, number>();
  const count = (status: number) => {
    sent += 1;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  };

  /** Sends one request to the API, checks the answer, and that a refusal wrote nothing. */
  const viaApi = async (req: HostileRequest) => {
    const before = await footprint(ctx.db);
    const res = await app.inject({ method: req.method, url: req.url, headers: req.headers, ...(req.payload !== undefined ? { payload: req.payload } : {}) });
    count(res.statusCode);
    const answer = { status: res.statusCode, headers: res.headers, body: res.body };
    checkAnswer(req, answer);
    if (res.statusCode >= 400) expect(await footprint(ctx.db), `${req.method} ${req.url.slice(0, 200)} wrote on ${res.statusCode}`).toBe(before);
    return answer;
  };

  beforeAll(async () => {
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
    app = await buildApp({ db: ctx.db, sink: ctx.sink, adminToken: TOKEN, directSyncTimeoutMs: 10_000, graceMs: 60_000 });
    const r = await sql<{ id: string }>`
      INSERT INTO annotation (userid, groupid, target_uri, text) SELECT 'acct:prop@example.com', 'g-prop', 'https://example.com/prop', 'seed ' || g
      FROM generate_series(1, 12) g RETURNING id`.execute(ctx.db);
    existing = r.rows.map((x) => String(x.id));
    await sql`INSERT INTO annotation_user (userid, display_name) VALUES ('acct:prop@example.com', 'Prop'), ('acct:other@example.com', NULL)`.execute(ctx.db);
    // The drainer on its own database: its first pass must not change the API's footprint.
    drainerCtx = await createTestContext();
    await migrate(drainerCtx.db, [annotationMigrations]);
    daemon = await startDrainerDaemon({
      db: drainerCtx.db,
      sink: drainerCtx.sink,
      collections: [annotations],
      logger: pino({ level: "silent" }),
      port: 0,
      host: "127.0.0.1",
      drainer: { intervalMs: 600_000 },
      maintenance: { intervalMs: 600_000 },
    });
  });
  afterAll(async () => {
    // How many generated requests one run sends (the figure the README quotes).
    const byStatus = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(", ");
    console.log(`hostile property suite: ${sent} generated requests (${byStatus}), seed ${SEED}, ${RUNS} runs per property`);
    await daemon?.stop();
    await app?.close();
    await drainerCtx?.close();
    await ctx?.close();
  });

  it("POST /api/annotations: every field hostile; a 201 stores exactly the text that was sent", async () => {
    await assertWithSeed(
      "create",
      fc.asyncProperty(createRequests, async (req) => {
        const res = await viaApi(req);
        if (res.status === 201) {
          const body = JSON.parse(res.body) as { id: string; user: string; text: string; tags: string[] };
          const row = await sql<{ userid: string; text: string; tags: string[] }>`SELECT userid, text, tags FROM annotation WHERE id = ${body.id}`.execute(ctx.db);
          expect(row.rows[0]!.userid).toBe(req.sent!.user);
          if (typeof req.sent!.text === "string") expect(row.rows[0]!.text).toBe(req.sent!.text);
          if (Array.isArray(req.sent!.tags)) expect(row.rows[0]!.tags).toEqual(req.sent!.tags);
        }
      }),
      RUNS * 2,
    );
  });

  it("GET, PATCH and DELETE /api/annotations/:id: hostile ids and bodies", async () => {
    await assertWithSeed("by id", fc.asyncProperty(byIdRequests(existing), async (req) => void (await viaApi(req))), RUNS * 2);
  });

  it("GET, PUT, PATCH and DELETE /api/users/:userid: hostile user ids and bodies; a 2xx PUT or PATCH stores exactly what was sent", async () => {
    await assertWithSeed(
      "users",
      fc.asyncProperty(userRequests(["acct:prop@example.com", "acct:other@example.com"]), async (req) => {
        const res = await viaApi(req);
        if (res.status < 300 && (req.method === "PUT" || req.method === "PATCH") && req.sent) {
          const body = JSON.parse(res.body) as { user: string };
          const row = await sql<{ display_name: string | null; hidden: boolean }>`SELECT display_name, hidden FROM annotation_user WHERE userid = ${body.user}`.execute(ctx.db);
          if (req.sent.displayName !== undefined) expect(row.rows[0]!.display_name).toBe(req.sent.displayName);
          if (req.sent.hidden !== undefined) expect(row.rows[0]!.hidden).toBe(req.sent.hidden);
        }
      }),
      RUNS * 2,
    );
  });

  it("GET /api/search: every parameter hostile", async () => {
    await assertWithSeed("search", fc.asyncProperty(searchRequests, async (req) => void (await viaApi(req))), RUNS);
  });

  it("POST /admin/reindex: every filter, option and credential hostile", async () => {
    await assertWithSeed("reindex", fc.asyncProperty(reindexRequests(TOKEN, existing), async (req) => void (await viaApi(req))), RUNS * 3);
  });

  it("the API's read-only routes (/admin/queue, /admin/alerts, /healthz, /metrics) and unknown paths: hostile queries, methods and credentials", async () => {
    await assertWithSeed(
      "api read-only",
      fc.asyncProperty(readOnlyRequests(["/admin/queue", "/admin/alerts", "/healthz", "/metrics", "/api/annotations", "/api/search", "/api/users"], TOKEN), async (req) => void (await viaApi(req))),
      RUNS,
    );
  });

  it("the drainer's /healthz, /metrics and /alerts: hostile queries, methods and paths", async () => {
    const before = await footprint(drainerCtx.db);
    await assertWithSeed(
      "drainer",
      fc.asyncProperty(readOnlyRequests(["/healthz", "/metrics", "/alerts"], undefined), async (req) => {
        const res = await fetch(`http://127.0.0.1:${daemon.port}${req.url}`, {
          method: req.method,
          headers: req.headers,
          ...(req.payload !== undefined ? { body: req.payload } : {}),
        });
        count(res.status);
        checkAnswer(req, { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() });
      }),
      RUNS,
    );
    expect(await footprint(drainerCtx.db)).toBe(before);
  });

  it("leave Object.prototype untouched after every polluted body", () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
