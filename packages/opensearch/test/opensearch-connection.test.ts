import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineSink } from "@tether/search-sink";
import { createTestContext, ensureTestCertificates, sigV4Check, startVerifyingProxy, type TestCertificates, type TestContext, type VerifyingProxy } from "@tether/testkit";
import { CapturedOutput } from "../../../test/connect/support/captured-processes.js";
import { exampleFromDocs } from "../../../test/connect/support/connect-docs.js";

const AWS = { accessKeyId: "AKIATETHERTEST0001", secretAccessKey: `aws-secret-${randomBytes(12).toString("hex")}`, region: "eu-west-1", service: "es" };

/**
 * OpenSearch's connection settings, end to end against a real OpenSearch behind endpoints that
 * check what the client sends: SigV4 signatures recomputed with the AWS SDK's signer, and a TLS
 * endpoint with the test CA that demands a client certificate and basic auth or a bearer token.
 * (The OpenSearch the tests run has no security plugin: its roles are not exercised here.)
 */
describe("OpenSearch connection settings: SigV4, CA, client certificate, basic auth, bearer token", () => {
  let ctx: TestContext<EngineSink>;
  let sigv4: VerifyingProxy;
  let tls: VerifyingProxy;
  let certs: TestCertificates;
  const out = new CapturedOutput();
  const password = `os-pw-${randomBytes(8).toString("hex")}`;
  const token = `os-jwt-${randomBytes(8).toString("hex")}`;

  beforeAll(async () => {
    ctx = await createTestContext({ sink: "per-project" });
    certs = await ensureTestCertificates(mkdtempSync(join(tmpdir(), "tether-os-tls-")));
    sigv4 = await startVerifyingProxy({ target: ctx.downstreamUrl, check: sigV4Check(AWS) });
    const accepted = new Set([`Basic ${Buffer.from(`tether:${password}`).toString("base64")}`, `Bearer ${token}`]);
    tls = await startVerifyingProxy({
      target: ctx.downstreamUrl,
      tls: { cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey), ca: readFileSync(certs.caFile), requireClientCertificate: true },
      check: (r) => (accepted.has(String(r.headers.authorization ?? "")) ? { forward: {} } : { refuse: { status: 401, reason: "unauthorized" } }),
    });
  });
  afterAll(async () => {
    await out.stopAll();
    await Promise.all([sigv4?.close(), tls?.close()]);
    await ctx?.close();
  });

  const base = () => ({ DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, TETHER_SINK: "opensearch" });
  const signed = (secret = AWS.secretAccessKey) => ({
    ...base(),
    OPENSEARCH_URL: sigv4.url,
    OPENSEARCH_AWS_REGION: AWS.region,
    OPENSEARCH_AWS_SERVICE: AWS.service,
    // The standard AWS chain: the environment's keys come first (and no instance metadata is asked).
    AWS_ACCESS_KEY_ID: AWS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: secret,
  });

  it("the OpenSearch Service example's settings sign every request: migrate, the API's writes, drain and verify pass the signature check", async () => {
    expect(Object.keys(exampleFromDocs("opensearch-service")).sort()).toEqual(["OPENSEARCH_AWS_REGION", "OPENSEARCH_AWS_SERVICE", "OPENSEARCH_URL", "TETHER_SINK"]);
    const migrate = await out.cli(["migrate", "--json"], signed());
    expect(migrate.code, migrate.stderr).toBe(0);
    // Due at once: drain --until-empty does not wait out a grace period.
    const api = await out.service("api", { ...signed(), TETHER_GRACE_MS: "0" });
    for (const text of ["a", "b"]) {
      const res = await out.fetch(`${api.url}/api/annotations`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ user: "acct:sig", group: "g", uri: "https://example.com/", text }) });
      expect(res.status).toBe(201);
    }
    await out.cli(["reindex", "--scope", "all"], signed());
    const drain = await out.cli(["drain", "--until-empty", "--json"], signed());
    expect(drain.code, drain.stderr).toBe(0);
    const verify = await out.cli(["verify", "--fail-on-drift", "--json"], signed());
    expect(verify.code, verify.stderr).toBe(0);
    expect(await ctx.raw.count("annotations", { match_all: {} })).toBe(2);
    expect(sigv4.refused).toEqual([]);
    expect(sigv4.received.filter((r) => /\/_bulk/.test(r.url)).length).toBeGreaterThan(0);
  });

  it("a wrong secret is refused by the signature check, and named as a refusal", async () => {
    const before = sigv4.refused.length;
    const r = await out.cli(["verify", "--json"], signed(`wrong-${AWS.secretAccessKey}`));
    expect(r.code).toBe(1);
    expect(sigv4.refused.length).toBeGreaterThan(before);
    expect(sigv4.refused.at(-1)).toBe("The request signature we calculated does not match the signature you provided");
    expect((JSON.parse(r.stdout) as { error: { code: string } }).error.code).toBe("forbidden");
  });

  it("over TLS with a private CA and a client certificate, with basic auth or a bearer token", async () => {
    const tlsEnv = { ...base(), OPENSEARCH_URL: tls.url, OPENSEARCH_CA_FILE: certs.caFile, OPENSEARCH_CLIENT_CERT: certs.clientCert, OPENSEARCH_CLIENT_KEY: certs.clientKey };
    const withPassword = await out.cli(["status", "--json"], { ...tlsEnv, OPENSEARCH_USERNAME: "tether", OPENSEARCH_PASSWORD: password });
    expect(withPassword.code, withPassword.stderr).toBe(0);
    expect(JSON.parse(withPassword.stdout)).toMatchObject({ indexes: [{ state: "ready" }] });
    const withToken = await out.cli(["status", "--json"], { ...tlsEnv, OPENSEARCH_BEARER_TOKEN: token });
    expect(JSON.parse(withToken.stdout)).toMatchObject({ indexes: [{ state: "ready" }] });
    expect(tls.received.some((r) => r.clientCertificate?.subject.includes("tether-client"))).toBe(true);
    // Without the client certificate the TLS handshake itself is refused.
    const { OPENSEARCH_CLIENT_CERT: _c, OPENSEARCH_CLIENT_KEY: _k, ...noCert } = tlsEnv;
    const refused = await out.cli(["status", "--json"], { ...noCert, OPENSEARCH_BEARER_TOKEN: token });
    expect(JSON.parse(refused.stdout)).toMatchObject({ indexes: [{ state: "unreachable" }] });
  });

  it("no password, token or AWS secret appears in anything printed or served", async () => {
    await out.stopAll();
    expect(out.leaks([password, token, AWS.secretAccessKey])).toEqual([]);
  });
});
