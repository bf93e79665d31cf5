import { Writable } from "node:stream";
import Fastify, { type FastifyInstance } from "fastify";
import pino from "pino";
import { sql } from "kysely";
import { createWriter, migrate, type Writer } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { createTestContext, type TestContext } from "@tether/testkit";
import { tetherAdmin, type AdminOptions } from "../../src/index.js";

export const OPERATOR = { name: "ops", role: "operator" as const, token: "operator-token-0123456789" };
export const VIEWER = { name: "grafana", role: "viewer" as const, token: "viewer-token-0123456789" };
export const asOperator = { authorization: `Bearer ${OPERATOR.token}` };
export const asViewer = { authorization: `Bearer ${VIEWER.token}` };

export interface AdminTestApp extends TestContext {
  app: FastifyInstance;
  writer: Writer;
  /** Every log line the app wrote. */
  logs: string[];
  /** Another app with the admin plugin on this database (a second replica); closed with this one. */
  replica(overrides?: Partial<AdminOptions>): Promise<FastifyInstance>;
  /** Verify runs that ended, by id. */
  verifyRunEnded(id: string): Promise<void>;
  /** Inserts an annotation through the write path (its job is due after `graceMs`, default 0). */
  annotate(values: { user: string; text?: string; group?: string }, opts?: { directSync?: boolean }): Promise<string>;
  jobCount(): Promise<number>;
}

/**
 * A test database with the annotation table and index, and a bare Fastify app with only the
 * admin plugin mounted under /admin (as an application would), logging to memory.
 */
export async function createAdminTestApp(overrides: Partial<AdminOptions> = {}): Promise<AdminTestApp> {
  const ctx = await createTestContext();
  await migrate(ctx.db, [annotationMigrations]);
  await ctx.sink.ensureIndex(annotations.index, annotations.mappings);
  const logs: string[] = [];
  const logger = pino({ level: "debug" }, new Writable({ write(chunk, _enc, cb) { logs.push(String(chunk)); cb(); } }));
  const ended = new Map<string, () => void>();
  const endedIds = new Set<string>();
  const build = async (o: Partial<AdminOptions>) => {
    const app = Fastify({ loggerInstance: logger, ajv: { customOptions: { removeAdditional: false, coerceTypes: false } } }) as unknown as FastifyInstance;
    await app.register(tetherAdmin, {
      prefix: "/admin",
      db: ctx.db,
      sink: ctx.sink,
      collections: [annotations],
      tokens: [OPERATOR, VIEWER],
      logger,
      onVerifyRunEnd: (id) => {
        endedIds.add(id);
        ended.get(id)?.();
      },
      ...o,
    });
    await app.ready();
    return app;
  };
  const app = await build(overrides);
  const replicas: FastifyInstance[] = [];
  const writer = createWriter({ sink: ctx.sink, graceMs: 0, directSyncTimeoutMs: 10_000 });
  return {
    ...ctx,
    app,
    writer,
    logs,
    async replica(o = {}) {
      const r = await build({ ...overrides, ...o });
      replicas.push(r);
      return r;
    },
    verifyRunEnded: (id) => (endedIds.has(id) ? Promise.resolve() : new Promise((resolve) => ended.set(id, resolve))),
    async annotate(v, opts = {}) {
      const r = await writer.createWithJob<{ id: string }>(ctx.db, annotations, { userid: v.user, groupid: v.group ?? "__world__", target_uri: "https://example.com", text: v.text ?? "hello" }, { directSync: opts.directSync ?? true });
      return String(r.row!.id);
    },
    async jobCount() {
      const r = await sql<{ n: string }>`SELECT count(*) AS n FROM tether.job`.execute(ctx.db);
      return Number(r.rows[0]!.n);
    },
    async close() {
      await Promise.all(replicas.map((r) => r.close()));
      await app.close();
      await ctx.close();
    },
  };
}
