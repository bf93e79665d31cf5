import { randomBytes } from "node:crypto";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb } from "@tether/core";
import { ElasticsearchSink } from "@tether/elasticsearch";
import {
  auditAnnotations,
  auditSummary,
  createTestCa,
  dropIndices,
  providedEngineUrl,
  startPrivatePostgres,
  waitForProgress,
  type PrivatePostgres,
  type TestCa,
} from "@tether/testkit";
import { runToExit } from "../hostile/support/run-to-exit.js";
import { annotationBody, countRows } from "../scenarios/support/annotation-context.js";
import { spawnService, stopAll, type ServiceProcess } from "../scenarios/support/processes.js";
import { runTether } from "../support/tether-cli.js";

const PASSWORD = "Tls-s3cret-Pw";

/**
 * A Postgres server with TLS on, a certificate for 127.0.0.1 and localhost signed by a CA made
 * for the run, and a pg_hba.conf that admits TLS connections only: every process of Tether
 * connects with `?sslmode=verify-full&sslrootcert=<ca file>` in its connection string, and a CA
 * that did not sign the server's certificate stops each with an error that says so.
 */
describe("Postgres over TLS (sslmode=verify-full, the CA in sslrootcert)", () => {
  const esUrl = providedEngineUrl("elasticsearch");
  const indexPrefix = `t${randomBytes(4).toString("hex")}_`;
  const sink = new ElasticsearchSink({ client: esUrl, indexPrefix });
  let ca: TestCa;
  let otherCa: TestCa;
  let server: PrivatePostgres;
  let port: string;
  let url: string;
  let db: Kysely<any>;
  let api: ServiceProcess | undefined;
  let drainer: ServiceProcess | undefined;

  beforeAll(async () => {
    ca = await createTestCa("Tether test CA");
    otherCa = await createTestCa("Another CA");
    const cert = await ca.issue("postgres", ["127.0.0.1", "localhost"]);
    server = await startPrivatePostgres({
      files: { "server.crt": cert.cert, "server.key": cert.key, "pg_hba.conf": "local all all trust\nhostssl all all 127.0.0.1/32 trust\n" },
      settings: { ssl: "on", ssl_cert_file: "server.crt", ssl_key_file: "server.key" },
      urlQuery: `sslmode=verify-full&sslrootcert=${ca.certFile}`,
    });
    const admin = createDb({ connectionString: server.url, max: 1 });
    try {
      // A role with a password, so every message below can be checked for it (trust auth ignores it).
      await sql.raw(`CREATE ROLE app LOGIN SUPERUSER PASSWORD '${PASSWORD}'`).execute(admin);
      await sql`CREATE DATABASE tether_tls OWNER app`.execute(admin);
    } finally {
      await admin.destroy();
    }
    port = new URL(server.url).port;
    url = `postgres://app:${PASSWORD}@127.0.0.1:${port}/tether_tls?sslmode=verify-full&sslrootcert=${ca.certFile}`;
    db = createDb({ connectionString: url, max: 2 });
  });
  afterAll(async () => {
    await stopAll([api, drainer]);
    await db?.destroy();
    await sink.close();
    await dropIndices(esUrl, indexPrefix);
    await server?.close();
    ca?.close();
    otherCa?.close();
  });

  it("serves the CLI, the API's writes, the drainer and its LISTEN session, each over a verified TLS connection", async () => {
    const env = { DATABASE_URL: url, ELASTICSEARCH_URL: esUrl, TETHER_INDEX_PREFIX: indexPrefix };
    const migrated = await runTether(["migrate"], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    // Every write is left to the drainer (no direct sync), due at once, and wakes it over LISTEN.
    api = await spawnService("api", { ...env, TETHER_DIRECT_SYNC: "false", TETHER_GRACE_MS: "0" });
    drainer = await spawnService("drainer", { ...env, TETHER_DRAIN_INTERVAL_MS: "600000" });
    for (let i = 0; i < 20; i++) {
      const r = await fetch(`${api.url}/api/annotations`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(annotationBody(i)) });
      expect(r.status).toBe(201);
    }
    await waitForProgress(() => countRows(db, "SELECT count(*) AS n FROM tether.job"), (n) => n === 0, { what: "the drainer, woken over LISTEN, to drain" });

    // pg_hba.conf admits nothing else, and pg_stat_ssl shows each process's sessions encrypted.
    const sessions = await sql<{ application_name: string; ssl: boolean }>`
      SELECT DISTINCT a.application_name, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
      WHERE a.datname = current_database() AND a.application_name LIKE 'tether%' ORDER BY 1`.execute(db);
    expect(sessions.rows).toEqual(
      expect.arrayContaining([
        { application_name: "tether-annotations-api", ssl: true },
        { application_name: "tether-drainer", ssl: true },
        { application_name: "tether-drainer-listen", ssl: true },
      ]),
    );
    expect(sessions.rows.every((s) => s.ssl)).toBe(true);

    const verify = await runTether(["verify", "--json"], env);
    expect(verify.code, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ driftedTotal: 0 });
    const drain = await runTether(["drain", "--until-empty"], env);
    expect(drain.code, drain.stderr).toBe(0);
    expect(auditSummary(await auditAnnotations(db, sink))).toEqual({ lost: 0, stale: 0, duplicates: 0, jobs: 0, parked: 0 });
    expect((await drainer.stop()).code).toBe(0);
    expect((await api.stop()).code).toBe(0);
  });

  it("refuses a server the given CA did not sign: every process names Postgres, the address and the TLS problem, the password masked", async () => {
    const wrong = `postgres://app:${PASSWORD}@127.0.0.1:${port}/tether_tls?sslmode=verify-full&sslrootcert=${otherCa.certFile}`;
    const masked = `postgres://app:***@127.0.0.1:${port}/tether_tls`;
    const env = { DATABASE_URL: wrong, ELASTICSEARCH_URL: esUrl, TETHER_INDEX_PREFIX: indexPrefix };
    const problem = /TLS: the server's certificate did not verify \(UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate\); give the CA/;

    const cli = await runTether(["status"], env);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`tether: cannot connect to Postgres at ${masked}`);
    expect(cli.stderr).toMatch(problem);
    const json = await runTether(["status", "--json"], env);
    expect(json.code).toBe(1);
    const { error } = JSON.parse(json.stdout) as { error: { code: string; message: string } };
    expect(error.code).toBe("postgres_unreachable");
    expect(error.message).toMatch(problem);

    for (const kind of ["api", "drainer"] as const) {
      const r = await runToExit(kind, env);
      expect(r.code, r.stdout.join("\n")).toBe(69);
      const fatal = r.stdout.map((l) => JSON.parse(l) as { level: number; postgres?: string; error?: { code?: string; message?: string } }).find((l) => l.level === 60);
      expect(fatal?.postgres).toContain(masked);
      expect(fatal?.error?.code).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
      expect(fatal?.error?.message).toMatch(problem);
      expect(r.stdout.join("\n") + r.stderr).not.toContain(PASSWORD);
    }
    expect(cli.stdout + cli.stderr + json.stdout + json.stderr).not.toContain(PASSWORD);
  });

  it("names the unreadable CA file, and a server with TLS off, instead of a bare error", async () => {
    const missing = `postgres://app:${PASSWORD}@127.0.0.1:${port}/tether_tls?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem`;
    const r = await runTether(["status"], { DATABASE_URL: missing, ELASTICSEARCH_URL: esUrl });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot connect to Postgres at postgres://app:***@");
    expect(r.stderr).toContain("TLS: cannot read sslrootcert /nonexistent/ca.pem (ENOENT)");

    const plain = await startPrivatePostgres();
    try {
      const noTls = `${plain.url}?sslmode=verify-full&sslrootcert=${ca.certFile}`;
      const off = await runTether(["status"], { DATABASE_URL: noTls, ELASTICSEARCH_URL: esUrl });
      expect(off.code).toBe(1);
      expect(off.stderr).toContain("TLS: the server does not accept TLS connections (its ssl setting is off)");
    } finally {
      await plain.close();
    }
  });
});
