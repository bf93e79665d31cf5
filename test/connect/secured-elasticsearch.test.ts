import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestContext,
  ensureSecureElasticsearch,
  startOtlpReceiver,
  waitFor,
  type OtlpReceiver,
  type SecureElasticsearch,
  type TestContext,
} from "@tether/testkit";
import { closedPort } from "../hostile/support/closed-port.js";
import { CapturedOutput } from "./support/captured-processes.js";
import { exampleFromDocs, roleFromDocs } from "./support/connect-docs.js";

const ADMIN_TOKEN = `console-${randomBytes(6).toString("hex")}`;
const secret = (what: string) => `${what}-${randomBytes(9).toString("hex")}`;

/** What `POST /_security/api_key` answers. */
interface ApiKey {
  id: string;
  api_key: string;
  encoded: string;
}

/**
 * Elasticsearch with security on, as teams run it: HTTPS with a private CA, users with the two
 * roles of docs/connecting.md (read from the page, as written), a cloud id. Every CLI verb and
 * both services run here, under exactly those roles, and everything they print or serve is
 * kept: the last test fails if any credential appears in it.
 *
 * Users and their roles are the file realm's (the basic-auth settings); the API keys are the
 * node's own, each created with one documented role as its role descriptor, and the bearer
 * token is the node's own too, issued for the drainer's user (password grant), so the engine
 * checks the documented role whichever credential the process sends.
 */
describe("a secured Elasticsearch: every process connects with the documented settings and roles, and no secret leaves", () => {
  let es: SecureElasticsearch;
  let ctx: TestContext;
  let otlp: OtlpReceiver;
  const out = new CapturedOutput();
  // Matches the documented roles' `shop_*`, as TETHER_INDEX_PREFIX=shop_ would.
  const prefix = `shop_${randomBytes(3).toString("hex")}_`;
  const users = { drainer: { name: "tether_drainer_user", password: secret("drainer-pw") }, app: { name: "tether_app_user", password: secret("app-pw") } };
  let appKey: ApiKey;
  let drainerKey: ApiKey;
  let token: { access_token: string; refresh_token: string };
  const secrets = () => [users.drainer.password, users.app.password, appKey.api_key, appKey.encoded, drainerKey.api_key, drainerKey.encoded, token.access_token, token.refresh_token, es.admin.password, ADMIN_TOKEN];

  const base = () => ({ DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: prefix, ELASTICSEARCH_URL: es.url, ELASTICSEARCH_CA_FILE: es.certs.caFile });
  const asDrainer = () => ({ ...base(), ELASTICSEARCH_USERNAME: users.drainer.name, ELASTICSEARCH_PASSWORD: users.drainer.password });

  beforeAll(async () => {
    [es, ctx, otlp] = await Promise.all([ensureSecureElasticsearch(), createTestContext(), startOtlpReceiver()]);
    const drainerRole = roleFromDocs("elasticsearch", "tether_drainer") as { cluster: string[]; indices: { names: string[]; privileges: string[] }[] };
    const appRole = roleFromDocs("elasticsearch", "tether_app");
    const without = (p: string) => ({ ...drainerRole, indices: drainerRole.indices.map((i) => ({ ...i, privileges: i.privileges.filter((x) => x !== p) })) });
    await es.setFileRealm({
      roles: {
        tether_drainer: drainerRole,
        tether_app: appRole,
        tether_drainer_no_read: without("read"),
        tether_drainer_no_manage: without("manage"),
        // What a verify reads with (the index's metadata, a refresh before comparing, the documents): no create_index, no manage.
        tether_verify_only: { cluster: ["monitor"], indices: [{ names: ["shop_*"], privileges: ["read", "view_index_metadata", "maintenance"] }] },
      },
      users: [
        { name: users.drainer.name, password: users.drainer.password, roles: ["tether_drainer"] },
        { name: users.app.name, password: users.app.password, roles: ["tether_app"] },
        { name: "tether_no_read", password: users.drainer.password, roles: ["tether_drainer_no_read"] },
        { name: "tether_no_manage", password: users.drainer.password, roles: ["tether_drainer_no_manage"] },
        { name: "tether_verify_only", password: users.drainer.password, roles: ["tether_verify_only"] },
      ],
    });
    const made = async (what: string, path: string, body: unknown) => {
      const r = await es.request("POST", path, body);
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(200);
      return r.body;
    };
    // Each key holds one documented role as its role descriptor: that role is all it may do.
    appKey = (await made("the app's API key", "/_security/api_key", { name: `${prefix}app`, role_descriptors: { tether_app: appRole } })) as ApiKey;
    drainerKey = (await made("the drainer's API key", "/_security/api_key", { name: `${prefix}drainer`, role_descriptors: { tether_drainer: drainerRole } })) as ApiKey;
    token = (await made("the drainer's token", "/_security/oauth2/token", { grant_type: "password", username: users.drainer.name, password: users.drainer.password })) as typeof token;
    // The node's own answer to each: the key or token authenticates, standing for what it should.
    const who = async (authorization: string) => (await es.request("GET", "/_security/_authenticate", undefined, authorization)).body as { username?: string; authentication_type?: string };
    expect(await who(`ApiKey ${appKey.encoded}`)).toMatchObject({ authentication_type: "api_key" });
    expect(await who(`Bearer ${token.access_token}`)).toMatchObject({ username: users.drainer.name, authentication_type: "token" });
  });

  afterAll(async () => {
    await out.stopAll();
    await es?.request("DELETE", `/${prefix}*`).catch(() => undefined);
    if (appKey && drainerKey) await es.request("DELETE", "/_security/api_key", { ids: [appKey.id, drainerKey.id] }).catch(() => undefined);
    if (token) await es.request("DELETE", "/_security/oauth2/token", { token: token.access_token }).catch(() => undefined);
    await Promise.all([ctx?.close(), otlp?.close()]);
  });

  it("the self-managed example's settings (URL, CA file, user and password) run `tether migrate` under the drainer role", async () => {
    const example = exampleFromDocs("self-managed");
    expect(Object.keys(example).sort()).toEqual(["ELASTICSEARCH_CA_FILE", "ELASTICSEARCH_PASSWORD", "ELASTICSEARCH_URL", "ELASTICSEARCH_USERNAME"]);
    const here: Record<string, string> = { ELASTICSEARCH_URL: es.url, ELASTICSEARCH_CA_FILE: es.certs.caFile, ELASTICSEARCH_USERNAME: users.drainer.name, ELASTICSEARCH_PASSWORD: users.drainer.password };
    const r = await out.cli(["migrate", "--json"], { DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: prefix, ...Object.fromEntries(Object.keys(example).map((k) => [k, here[k]!])) });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ indexes: [{ collection: "annotation", state: "created" }] });
  });

  it("the API writes and syncs under the app role's API key; its health, metrics, console and spans answer", async () => {
    const api = await out.service("api", {
      ...base(),
      ELASTICSEARCH_API_KEY: appKey.encoded,
      TETHER_ADMIN_TOKEN: ADMIN_TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
    });
    const ids: string[] = [];
    for (const text of ["one", "two", "three"]) {
      const res = await out.fetch(`${api.url}/api/annotations`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user: "acct:ann", group: "g", uri: "https://example.com/", text }) });
      expect(res.status, res.text).toBe(201);
      ids.push((JSON.parse(res.text) as { id: string }).id);
    }
    // The direct sync wrote them: the documents are there before any drainer ran.
    await waitFor(async () => (await es.request("GET", `/${prefix}annotations/_doc/${ids[2]}`)).body?.found === true, { what: "the direct sync's document" });
    expect(JSON.parse((await out.fetch(`${api.url}/healthz`)).text)).toMatchObject({ status: "ok", elasticsearch: "ok" });
    await waitFor(async () => (JSON.parse((await out.fetch(`${api.url}/api/search?user=acct:ann`)).text) as { total?: number }).total === 3, { what: "a search finding the three" });
    const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
    expect((await out.fetch(`${api.url}/admin/overview`, auth)).status).toBe(200);
    const trace = await out.fetch(`${api.url}/admin/trace/annotation/${ids[0]}`, auth);
    expect(trace.status).toBe(200);
    expect(trace.text).toMatch(/"contentMatches":true/);
    expect((await out.fetch(`${api.url}/metrics`)).status).toBe(200);
    await waitFor(() => otlp.spans().some((s) => s.serviceName === "tether-api"), { what: "the API's spans" });
  });

  it("the drainer drains and verifies under the drainer role's bearer token", async () => {
    const reindex = await out.cli(["reindex", "--scope", "all", "--json"], asDrainer());
    expect(reindex.code, reindex.stderr).toBe(0);
    const drainer = await out.service("drainer", {
      ...base(),
      ELASTICSEARCH_BEARER_TOKEN: token.access_token,
      TETHER_DRAIN_INTERVAL_MS: "200",
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    await waitFor(async () => {
      const health = JSON.parse((await out.fetch(`${drainer.url}/healthz`)).text) as { lastPass?: { claimed?: number; error?: string } };
      return (health.lastPass?.claimed ?? 0) > 0 && health.lastPass?.error === undefined;
    }, { what: "a drain pass that claimed the re-index" });
    const status = await out.cli(["status", "--json"], asDrainer());
    // The API's own jobs wait out their grace period; the re-index is due now.
    await waitFor(async () => (JSON.parse((await out.cli(["status", "--json"], asDrainer())).stdout) as { due: number }).due === 0, { what: "the due jobs drained" });
    expect(status.code).toBe(0);
    expect((await out.fetch(`${drainer.url}/metrics`)).text).toContain("tether_jobs_completed_total");
    await out.fetch(`${drainer.url}/alerts`);
    await waitFor(() => otlp.spans().some((s) => s.serviceName === "tether-drainer"), { what: "the drainer's spans" });
  });

  it("every CLI verb runs under the drainer role", async () => {
    const env = asDrainer();
    const verbs: string[][] = [
      ["status"],
      ["reindex", "--scope", "ids", "--ids", "1,2"],
      ["drain", "--until-empty", "--json"],
      ["verify", "--json"],
      ["verify", "--deep", "--json"],
      ["alerts", "--json"],
      ["parked", "list", "--json"],
      ["pause", "annotation", "--reason", "maintenance"],
      ["resume", "annotation"],
      ["capture", "status", "annotation"],
      ["purge-tombstones", "--dry-run", "--json"],
      ["rebuild", "annotation", "--json"],
      ["rebuild", "annotation", "--finish", "--json"],
      ["migrate"],
    ];
    for (const args of verbs) {
      const r = await out.cli(args, env);
      // alerts exits 1 while an alert fires; nothing here may fail for want of a privilege.
      expect(r.code === 0 || (args[0] === "alerts" && r.code === 1), `tether ${args.join(" ")}: ${r.code}\n${r.stderr}${r.stdout}`).toBe(true);
      expect(r.stderr + r.stdout).not.toMatch(/security_exception|permission denied|HTTP 40[13]/);
    }
    // Fourteen CLI processes one after another: on a busy machine each start alone takes seconds.
  }, 600_000);

  it("the Elastic Cloud example's settings: a cloud id (decoded to this node) and an API key", async () => {
    const example = exampleFromDocs("elastic-cloud");
    expect(Object.keys(example).sort()).toEqual(["ELASTICSEARCH_API_KEY", "ELASTICSEARCH_CLOUD_ID"]);
    // host$es-id$kibana-id; the client connects to https://<es-id>.<host>: here 127 . 0.0.1:<port>.
    const cloudId = `tether-test:${Buffer.from(`0.0.1:${es.port}$127$kibana`).toString("base64")}`;
    // The private CA is this node's; Elastic Cloud's certificates need none.
    const r = await out.cli(["verify", "--json"], { DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: prefix, ELASTICSEARCH_CLOUD_ID: cloudId, ELASTICSEARCH_API_KEY: drainerKey.encoded, ELASTICSEARCH_CA_FILE: es.certs.caFile });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/"drift"|"collections"|"annotation"/);
  });

  it("a CA fingerprint instead of the file, credentials inside the URL, an `id:key` API key", async () => {
    const inUrl = es.url.replace("https://", `https://${users.drainer.name}:${encodeURIComponent(users.drainer.password)}@`);
    const fingerprint = await out.cli(["status", "--json"], { DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: prefix, ELASTICSEARCH_URL: inUrl, ELASTICSEARCH_CA_FINGERPRINT: es.certs.caFingerprint });
    expect(fingerprint.code, fingerprint.stderr).toBe(0);
    expect(JSON.parse(fingerprint.stdout)).toMatchObject({ indexes: [{ state: "ready" }] });
    const idKey = await out.cli(["status", "--json"], { ...base(), ELASTICSEARCH_API_KEY: `${drainerKey.id}:${drainerKey.api_key}` });
    expect(idKey.code, idKey.stderr).toBe(0);
    // Without the CA the node's certificate is refused.
    const noCa = await out.cli(["status", "--json"], { DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: prefix, ELASTICSEARCH_URL: inUrl });
    expect(JSON.parse(noCa.stdout)).toMatchObject({ indexes: [{ state: "unreachable" }] });
  });

  /** The one sentence of a refused privilege, for `verb`, on an index of `prefix`. */
  const refusal = (verb: string, privilege: string, indexPrefix: string) =>
    new RegExp(`^permission denied: tether ${verb} needs the index privilege ${privilege}( \\([^)]*\\))? on ${indexPrefix}annotations(__\\S+)?; grant it to the role tether_drainer \\(docs/connecting.md#roles\\); the engine refused user \\S+ \\S+$`);
  const refusedWith = (r: { code: number; stdout: string; stderr: string }) => (JSON.parse(r.stdout) as { error?: { code: string; message: string; privilege?: string; index?: string; exitCode: number } }).error;

  it("with `manage` taken out of the role, every verb that needs it says the one sentence (`forbidden`, the privilege and the index) and exits 1; the others run", async () => {
    const env = { ...base(), ELASTICSEARCH_USERNAME: "tether_no_manage", ELASTICSEARCH_PASSWORD: users.drainer.password };
    // What each verb asks the engine for: manage (create, aliases, refresh, and the index's
    // metadata it includes), or nothing of it (Postgres only, or documents only).
    const verbs: { args: string[]; needsManage: boolean }[] = [
      { args: ["status", "--json"], needsManage: true },
      { args: ["verify", "--json"], needsManage: true },
      { args: ["rebuild", "annotation", "--json"], needsManage: true },
      { args: ["purge-tombstones", "--json"], needsManage: true },
      { args: ["migrate", "--json"], needsManage: true },
      { args: ["reindex", "--scope", "ids", "--ids", "1,2", "--json"], needsManage: false },
      // Its start-up check reads the index's metadata (view_index_metadata, part of manage).
      { args: ["drain", "--until-empty", "--json"], needsManage: true },
      { args: ["parked", "list", "--json"], needsManage: false },
      { args: ["pause", "annotation", "--json"], needsManage: false },
      { args: ["resume", "annotation", "--json"], needsManage: false },
    ];
    for (const { args, needsManage } of verbs) {
      const r = await out.cli(args, env);
      const what = `tether ${args.join(" ")}: ${r.code}\n${r.stderr}${r.stdout}`;
      expect(r.stderr + r.stdout, what).not.toMatch(/security_exception|HTTP 403/);
      if (!needsManage) {
        expect(r.code, what).toBe(0);
        continue;
      }
      expect(r.code, what).toBe(1);
      const verb = args.filter((a) => !a.startsWith("--") && a !== "annotation").join(" ");
      const error = refusedWith(r)!;
      expect(error, what).toMatchObject({ code: "forbidden", privilege: "manage", exitCode: 1, index: expect.stringMatching(new RegExp(`^${prefix}annotations`)) });
      // migrate and status keep their report: the index reads `forbidden`, not `unreachable`.
      if (verb === "migrate" || verb === "status") {
        const report = JSON.parse(r.stdout) as { indexes: { state: string; error: string; privilege: string }[] };
        expect(report.indexes[0], what).toMatchObject({ state: "forbidden", privilege: "manage", error: expect.stringMatching(refusal(verb, "manage", prefix)) });
        expect(error.message, what).toContain(report.indexes[0]!.error);
        expect(r.stderr, what).toContain(report.indexes[0]!.error);
      } else {
        expect(error.message, what).toMatch(refusal(verb, "manage", prefix));
        expect(r.stderr, what).toContain(error.message);
      }
      expect(r.stderr, what).not.toMatch(/\n\s+at /);
    }
  }, 600_000);

  it("`tether migrate` under the app role (no `manage`) cannot create a fresh index: `forbidden`, the privilege, the index with its prefix", async () => {
    // A fresh prefix: migrate must create the index.
    const fresh = `shop_${randomBytes(3).toString("hex")}_`;
    const migrate = await out.cli(["migrate", "--json"], { ...base(), ELASTICSEARCH_USERNAME: users.app.name, ELASTICSEARCH_PASSWORD: users.app.password, TETHER_INDEX_PREFIX: fresh });
    expect(migrate.code).toBe(1);
    const doc = JSON.parse(migrate.stdout) as { indexes: { state: string; error?: string }[]; error: { code: string; privilege: string; index: string } };
    expect(doc.indexes[0]).toMatchObject({ state: "forbidden" });
    expect(doc.error).toMatchObject({ code: "forbidden", privilege: "manage", index: expect.stringMatching(new RegExp(`^${fresh}annotations__\\S+$`)) });
    expect(doc.indexes[0]!.error).toMatch(refusal("migrate", "manage", fresh));
    expect(migrate.stderr).toMatch(/grant the privilege, then run `tether migrate` again/);
    // Verify never creates the index: on the fresh prefix it says the index is missing and what to run.
    const verify = await out.cli(["verify", "--json"], { ...asDrainer(), TETHER_INDEX_PREFIX: fresh });
    expect(verify.code).toBe(1);
    expect(refusedWith(verify)!.message).toMatch(/the index does not exist, so there is nothing to verify: run `tether migrate` to create it/);
    expect((await es.request("GET", `/_alias/${fresh}annotations`)).status).toBe(404);
  });

  it("`tether verify` reads only: it runs under a role without `manage` or `create_index`, and without `read` it names `read`", async () => {
    const readOnly = await out.cli(["verify", "--json"], { ...base(), ELASTICSEARCH_USERNAME: "tether_verify_only", ELASTICSEARCH_PASSWORD: users.drainer.password });
    expect(readOnly.code, readOnly.stderr).toBe(0);
    const verify = await out.cli(["verify", "--json"], { ...base(), ELASTICSEARCH_USERNAME: "tether_no_read", ELASTICSEARCH_PASSWORD: users.drainer.password });
    expect(verify.code).toBe(1);
    const error = refusedWith(verify)!;
    expect(error).toMatchObject({ code: "forbidden", privilege: "read", index: expect.stringMatching(new RegExp(`^${prefix}annotations`)) });
    expect(error.message).toMatch(refusal("verify", "read", prefix));
    expect(verify.stderr).not.toMatch(/\n\s+at /);
  });

  it("the drainer refused `manage` at start, and the API under the app role, say the same sentence, each naming itself and its role", async () => {
    const fresh = `shop_${randomBytes(3).toString("hex")}_`;
    const drainer = await out.service("drainer", { ...base(), TETHER_INDEX_PREFIX: fresh, ELASTICSEARCH_USERNAME: "tether_no_manage", ELASTICSEARCH_PASSWORD: users.drainer.password });
    const sentence = new RegExp(`permission denied: the drainer needs the index privilege manage( \\([^)]*\\))? on ${fresh}annotations\\S*; grant it to the role tether_drainer \\(docs/connecting.md#roles\\)`);
    await waitFor(() => drainer.logs.some((l) => sentence.test(l)), { what: "the drainer's start-up line naming the refused privilege" });
    await drainer.stop(10_000);
    // The API under the app role cannot create the index: the same sentence, naming the API and its role, and the way out.
    const api = await out.service("api", { ...base(), TETHER_INDEX_PREFIX: fresh, ELASTICSEARCH_USERNAME: users.app.name, ELASTICSEARCH_PASSWORD: users.app.password });
    const apiSentence = new RegExp(`permission denied: the API needs the index privilege create_index \\(or manage, all\\) on ${fresh}annotations__\\S+; grant it to the role tether_app \\(docs/connecting.md#roles\\).*or create the index with \`tether migrate\``);
    await waitFor(() => api.logs.some((l) => apiSentence.test(l)), { what: "the API's line naming the refused privilege" });
    await api.stop(10_000);
  });

  it("wrong credentials, and an unreachable node with credentials in its URL, fail without quoting them", async () => {
    const port = await closedPort();
    const unreachable = await out.cli(["drain", "--once", "--json"], { DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: prefix, ELASTICSEARCH_URL: `https://${users.drainer.name}:${users.drainer.password}@127.0.0.1:${port}`, ELASTICSEARCH_CA_FILE: es.certs.caFile });
    expect(unreachable.code).toBe(1);
    expect(JSON.parse(unreachable.stdout)).toMatchObject({ error: { code: "elasticsearch_unreachable" } });
    const wrong = await out.cli(["verify", "--json"], { ...asDrainer(), ELASTICSEARCH_PASSWORD: appKey.api_key });
    expect(wrong.code).toBe(1);
    expect((JSON.parse(wrong.stdout) as { error: { code: string; message: string } }).error).toMatchObject({ code: "authentication_failed", message: expect.stringMatching(/refused the credentials \(HTTP 401\): .*unable to authenticate user \[tether_drainer_user\]/) });
    const contradictory = await out.cli(["status", "--json"], { ...asDrainer(), ELASTICSEARCH_API_KEY: appKey.encoded });
    expect(contradictory.code).toBe(2);
    expect(JSON.parse(contradictory.stdout)).toEqual({ error: { code: "invalid_setting", message: "ELASTICSEARCH_USERNAME and ELASTICSEARCH_API_KEY: two kinds of credentials: give one (basic auth, an API key, a bearer token or SigV4)", exitCode: 2 } });
    const drainer = await out.service("drainer", { ...base(), ELASTICSEARCH_API_KEY: `${appKey.id}:${drainerKey.api_key}`, TETHER_DRAIN_INTERVAL_MS: "200" });
    await out.cli(["reindex", "--scope", "all"], asDrainer());
    await waitFor(() => drainer.logs.some((l) => l.includes("unable to authenticate")), { what: "the drainer logging the refused key" });
    await out.fetch(`${drainer.url}/healthz`);
    const bad = await out.service("api", { ...base(), ELASTICSEARCH_API_KEY: appKey.encoded, ELASTICSEARCH_PASSWORD: users.app.password }).catch((e: Error) => e);
    out.keep("api refused at start", String(bad));
    expect(String(bad)).toMatch(/"code":78[\s\S]*invalidEnv[\s\S]*ELASTICSEARCH_PASSWORD[\s\S]*needs a username/);
  });

  it("no password, API key or token appears in anything the processes printed or served", async () => {
    await out.stopAll();
    out.keep("OTLP spans", JSON.stringify(otlp.spans()));
    out.keep("OTLP metrics", JSON.stringify(otlp.metrics()));
    expect(out.texts.length).toBeGreaterThan(40);
    expect(otlp.spans().length).toBeGreaterThan(0);
    expect(out.leaks(secrets())).toEqual([]);
  });
});
