import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConnectionSettingError, describeConnection, readConnectionFiles, resolveConnection, sinkEnvironment, type ConnectionEnvironment } from "../src/index.js";

/** The environment as `sinkEnvironment` reads it from plain variables. */
const env = (vars: Record<string, string>, kind: "elasticsearch" | "opensearch" = "elasticsearch"): ConnectionEnvironment =>
  sinkEnvironment({ ...vars, ...(kind === "opensearch" ? { TETHER_SINK: "opensearch" } : {}) }).connection ?? {};

const refused = (fn: () => unknown): ConnectionSettingError => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectionSettingError);
    return err as ConnectionSettingError;
  }
  throw new Error("expected a ConnectionSettingError");
};

const ENCODED_KEY = Buffer.from("key-id:key-secret").toString("base64");

describe("which connection setting wins (the decision table of connection-settings.ts)", () => {
  it("row 1: with nothing set, the engine's loopback default, no credentials, 10 s and 5 MiB", () => {
    expect(resolveConnection("elasticsearch", {}, {})).toEqual({
      kind: "elasticsearch",
      nodes: ["http://127.0.0.1:9200"],
      requestTimeoutMs: 10_000,
      maxBulkBytes: 5 * 1024 * 1024,
      from: { address: "the default URL" },
    });
    expect(resolveConnection("opensearch", {}, {}).nodes).toEqual(["http://127.0.0.1:9201"]);
  });

  it("row 2: what only the environment sets is the environment's", () => {
    const c = resolveConnection("elasticsearch", env({ ELASTICSEARCH_URL: "https://a:9243,https://b:9243", ELASTICSEARCH_API_KEY: "key-id:key-secret", ELASTICSEARCH_REQUEST_TIMEOUT_MS: "2500", TETHER_BULK_MAX_BYTES: "1000000" }));
    expect(c).toMatchObject({ nodes: ["https://a:9243", "https://b:9243"], auth: { kind: "apiKey", apiKey: { id: "key-id", api_key: "key-secret" } }, requestTimeoutMs: 2500, maxBulkBytes: 1_000_000 });
    expect(c.from).toEqual({ address: "ELASTICSEARCH_URL", credentials: "ELASTICSEARCH_API_KEY" });
  });

  it("row 3: what only the config sets is the config's", () => {
    const c = resolveConnection("opensearch", {}, { url: ["https://os:9200"], bearerToken: "jwt", requestTimeoutMs: 3000 });
    expect(c).toMatchObject({ nodes: ["https://os:9200"], auth: { kind: "bearer", token: "jwt" }, requestTimeoutMs: 3000 });
    expect(c.from.credentials).toBe("opensearch({ bearerToken })");
  });

  it("row 4: when both set a group the config's wins whole, never mixed with the environment's", () => {
    const e = env({ ELASTICSEARCH_CLOUD_ID: `dep:${Buffer.from("example.com:443$es$kb").toString("base64")}`, ELASTICSEARCH_USERNAME: "env-user", ELASTICSEARCH_PASSWORD: "env-pass", ELASTICSEARCH_REQUEST_TIMEOUT_MS: "2000" });
    const c = resolveConnection("elasticsearch", e, { url: "https://es:9200", apiKey: ENCODED_KEY, requestTimeoutMs: 7000 });
    expect(c.nodes).toEqual(["https://es:9200"]);
    expect(c.cloudId).toBeUndefined();
    expect(c.auth).toEqual({ kind: "apiKey", apiKey: ENCODED_KEY });
    expect(c.requestTimeoutMs).toBe(7000);
    // A group the config leaves out stays the environment's.
    expect(resolveConnection("elasticsearch", e, { apiKey: ENCODED_KEY }).cloudId).toMatch(/^dep:/);
    // Credentials inside the config's URL are the config's credentials: they beat the environment's.
    expect(resolveConnection("elasticsearch", e, { url: "https://cfg:s3cret@es:9200" }).auth).toEqual({ kind: "basic", username: "cfg", password: "s3cret" });
  });

  it("row 5: two kinds of credentials in one source are refused, naming both", () => {
    expect(refused(() => resolveConnection("elasticsearch", env({ ELASTICSEARCH_USERNAME: "u", ELASTICSEARCH_PASSWORD: "p", ELASTICSEARCH_API_KEY: "i:k" }))).setting).toBe("ELASTICSEARCH_USERNAME and ELASTICSEARCH_API_KEY");
    expect(refused(() => resolveConnection("opensearch", env({ OPENSEARCH_BEARER_TOKEN: "t", OPENSEARCH_AWS_REGION: "eu-west-1" }, "opensearch"))).message).toMatch(/^OPENSEARCH_BEARER_TOKEN and OPENSEARCH_AWS_REGION: two kinds of credentials/);
  });

  it("row 6: a url and a cloud id in one source are refused", () => {
    const e = refused(() => resolveConnection("elasticsearch", {}, { url: "https://es:9200", cloudId: `d:${Buffer.from("h$e$k").toString("base64")}` }));
    expect(e.message).toBe("elasticsearch({ url }) and elasticsearch({ cloudId }): a URL and a cloud id: give one");
    expect(e.source).toBe("config");
  });

  it("row 7: a CA file and a CA fingerprint in one source are refused", () => {
    expect(refused(() => resolveConnection("elasticsearch", env({ ELASTICSEARCH_URL: "https://es:9200", ELASTICSEARCH_CA_FILE: "/ca.pem", ELASTICSEARCH_CA_FINGERPRINT: "ab".repeat(32) }))).setting).toBe("ELASTICSEARCH_CA_FILE and ELASTICSEARCH_CA_FINGERPRINT");
  });

  it("row 8: a client certificate without its key (or the reverse) names the missing one", () => {
    expect(refused(() => resolveConnection("opensearch", env({ OPENSEARCH_URL: "https://os:9200", OPENSEARCH_CLIENT_CERT: "/c.pem" }, "opensearch"))).message).toBe("OPENSEARCH_CLIENT_CERT: needs its key (OPENSEARCH_CLIENT_KEY)");
    expect(refused(() => resolveConnection("elasticsearch", {}, { url: "https://es:9200", clientKey: "/k.pem" })).message).toBe("elasticsearch({ clientKey }): needs its certificate (elasticsearch({ clientCert }))");
  });

  it("row 9: a username without a password (or the reverse) names the missing one", () => {
    expect(refused(() => resolveConnection("elasticsearch", env({ ELASTICSEARCH_USERNAME: "u" }))).message).toBe("ELASTICSEARCH_USERNAME: needs a password (ELASTICSEARCH_PASSWORD)");
    expect(refused(() => resolveConnection("elasticsearch", env({ ELASTICSEARCH_PASSWORD: "p" }))).message).toBe("ELASTICSEARCH_PASSWORD: needs a username (ELASTICSEARCH_USERNAME)");
  });

  it("row 10: credentials inside the URL are basic auth, stripped from the node; with a username beside them, refused", () => {
    const c = resolveConnection("elasticsearch", env({ ELASTICSEARCH_URL: "https://tether%40app:p%3Ass@es:9200" }));
    expect(c.nodes).toEqual(["https://es:9200"]);
    expect(c.auth).toEqual({ kind: "basic", username: "tether@app", password: "p:ss" });
    const e = refused(() => resolveConnection("elasticsearch", env({ ELASTICSEARCH_URL: "https://u:p@es:9200", ELASTICSEARCH_USERNAME: "v", ELASTICSEARCH_PASSWORD: "q" })));
    expect(e.setting).toBe("ELASTICSEARCH_URL and ELASTICSEARCH_USERNAME");
    expect(e.message).not.toContain("p@");
  });

  it("row 11: a TLS setting with an http:// node is refused", () => {
    expect(refused(() => resolveConnection("elasticsearch", env({ ELASTICSEARCH_CA_FILE: "/ca.pem" }))).message).toBe("ELASTICSEARCH_CA_FILE: is a TLS setting, but the default URL names an http:// node: use https://");
    expect(refused(() => resolveConnection("opensearch", {}, { url: "http://os:9200", clientCert: "/c", clientKey: "/k" })).setting).toBe("opensearch({ clientCert })");
  });

  it("row 12: an AWS service without a region is refused; a region alone signs for es", () => {
    expect(refused(() => resolveConnection("opensearch", env({ OPENSEARCH_AWS_SERVICE: "aoss" }, "opensearch"))).message).toBe("OPENSEARCH_AWS_REGION: required for SigV4 signing (OPENSEARCH_AWS_SERVICE is set)");
    expect(resolveConnection("opensearch", env({ OPENSEARCH_AWS_REGION: "eu-west-1" }, "opensearch")).auth).toEqual({ kind: "aws", region: "eu-west-1", service: "es" });
    expect(resolveConnection("opensearch", {}, { aws: { region: "us-east-1", service: "aoss" } }).auth).toEqual({ kind: "aws", region: "us-east-1", service: "aoss" });
  });

  it("row 13: a setting the engine does not have is refused in the config, and its variable is not read", () => {
    expect(refused(() => resolveConnection("opensearch", {}, { apiKey: "i:k" })).message).toBe("opensearch({ apiKey }): OpenSearch has no such setting (it is Elasticsearch's)");
    expect(refused(() => resolveConnection("elasticsearch", {}, { aws: { region: "eu-west-1" } })).setting).toBe("elasticsearch({ aws.region })");
    expect(env({ TETHER_SINK: "opensearch", OPENSEARCH_API_KEY: "i:k", OPENSEARCH_CLOUD_ID: "x" }, "opensearch")).toEqual({});
    expect(env({ ELASTICSEARCH_AWS_REGION: "eu-west-1" })).toEqual({});
  });

  it("row 14: malformed values are refused naming the setting, never quoting the value", () => {
    const cases: [Record<string, string>, string, RegExp][] = [
      [{ ELASTICSEARCH_URL: "es.internal:9200" }, "ELASTICSEARCH_URL", /must be an http:\/\/ or https:\/\/ URL/],
      [{ ELASTICSEARCH_URL: "https://a:9200,ftp://u:hunter2@b" }, "ELASTICSEARCH_URL", /node 2 must be an http/],
      [{ ELASTICSEARCH_URL: "https://es:9200", ELASTICSEARCH_CA_FINGERPRINT: "hunter2-not-hex" }, "ELASTICSEARCH_CA_FINGERPRINT", /64 hex digits/],
      [{ ELASTICSEARCH_REQUEST_TIMEOUT_MS: "10s" }, "ELASTICSEARCH_REQUEST_TIMEOUT_MS", /positive integer/],
      [{ TETHER_BULK_MAX_BYTES: "0" }, "TETHER_BULK_MAX_BYTES", /positive integer/],
      [{ ELASTICSEARCH_CLOUD_ID: "hunter2" }, "ELASTICSEARCH_CLOUD_ID", /not an Elastic Cloud id/],
      [{ ELASTICSEARCH_API_KEY: "hunter2!" }, "ELASTICSEARCH_API_KEY", /neither `id:key` nor an encoded API key/],
    ];
    for (const [vars, setting, problem] of cases) {
      const e = refused(() => resolveConnection("elasticsearch", env(vars)));
      expect(e.setting).toBe(setting);
      expect(e.message).toMatch(problem);
      expect(e.message).not.toContain("hunter2");
    }
    expect(refused(() => resolveConnection("opensearch", env({ OPENSEARCH_AWS_REGION: "eu-west-1", OPENSEARCH_AWS_SERVICE: "s3" }, "opensearch"))).setting).toBe("OPENSEARCH_AWS_SERVICE");
  });
});

describe("reading what a connection names", () => {
  it("normalises a fingerprint to Node's form and accepts an encoded API key", () => {
    const c = resolveConnection("elasticsearch", env({ ELASTICSEARCH_URL: "https://es:9200", ELASTICSEARCH_CA_FINGERPRINT: "ab:".repeat(31) + "ab", ELASTICSEARCH_API_KEY: ENCODED_KEY }));
    expect(c.caFingerprint).toBe(Array(32).fill("AB").join(":"));
    expect(c.auth).toEqual({ kind: "apiKey", apiKey: ENCODED_KEY });
  });

  it("names the variable of a CA file that is missing or not PEM, and describes a connection without its secrets", () => {
    const dir = mkdtempSync(join(tmpdir(), "tether-conn-"));
    writeFileSync(join(dir, "not-pem.txt"), "hello");
    const missing = resolveConnection("elasticsearch", env({ ELASTICSEARCH_URL: "https://es:9200", ELASTICSEARCH_CA_FILE: join(dir, "nope.pem") }));
    expect(refused(() => readConnectionFiles(missing)).message).toBe(`ELASTICSEARCH_CA_FILE: cannot read ${join(dir, "nope.pem")}: no such file`);
    const notPem = resolveConnection("opensearch", {}, { url: "https://os:9200", caFile: join(dir, "not-pem.txt") });
    expect(refused(() => readConnectionFiles(notPem)).message).toBe(`opensearch({ caFile }): ${join(dir, "not-pem.txt")} holds no PEM certificate`);
    const c = resolveConnection("elasticsearch", env({ ELASTICSEARCH_URL: "https://u:hunter2@es:9200" }));
    expect(describeConnection(c)).toEqual({ nodes: ["https://es:9200"], auth: "basic from ELASTICSEARCH_URL", requestTimeoutMs: 10_000, maxBulkBytes: 5_242_880 });
    expect(JSON.stringify(describeConnection(c))).not.toContain("hunter2");
  });
});
