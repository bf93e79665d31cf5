import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:tls";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, ensureTestCertificates, type TestCertificates, type TestContext } from "@tether/testkit";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a process of the repo from source to its exit (the CLI, or a service that must refuse to start). */
function run(main: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--conditions=source", "--import", "tsx", main, ...args], { cwd: repoRoot, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "info", ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A TLS endpoint holding `cert`: the handshake is all these tests need (it closes every connection after). */
async function tlsEndpoint(cert: string, key: string): Promise<{ server: Server; url: string }> {
  const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * ELASTICSEARCH_CA_FINGERPRINT is checked against the CA the node sends in its TLS chain. A node
 * whose certificate file holds only its own certificate (elasticsearch-certutil cert --pem's
 * default) fails the client's check with "Invalid or malformed certificate": every process
 * refuses the setting at its first request, naming ELASTICSEARCH_CA_FILE instead.
 */
describe("a CA fingerprint against a node that sends only its own certificate", () => {
  let ctx: TestContext;
  let certs: TestCertificates;
  let leafOnly: { server: Server; url: string };
  let withChain: { server: Server; url: string };
  const env = (url: string) => ({ DATABASE_URL: ctx.databaseUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix, ELASTICSEARCH_URL: url, ELASTICSEARCH_CA_FINGERPRINT: certs.caFingerprint });

  beforeAll(async () => {
    certs = await ensureTestCertificates(mkdtempSync(join(tmpdir(), "tether-fingerprint-")));
    ctx = await createTestContext();
    // server.leaf.crt: the node's certificate alone; serverCert: the node's followed by the CA's.
    leafOnly = await tlsEndpoint(join(certs.dir, "server.leaf.crt"), certs.serverKey);
    withChain = await tlsEndpoint(certs.serverCert, certs.serverKey);
  });
  afterAll(async () => {
    await Promise.all([leafOnly, withChain].map((e) => e && new Promise((resolve) => e.server.close(resolve))));
    await ctx?.close();
  });

  const cli = fileURLToPath(new URL("../../packages/cli/src/main.ts", import.meta.url));

  it("the CLI refuses the setting (exit 2, invalid_setting), naming the fingerprint and ELASTICSEARCH_CA_FILE instead", async () => {
    for (const verb of [["migrate", "--json"], ["status", "--json"], ["verify", "--json"]]) {
      const r = await run(cli, verb, env(leafOnly.url));
      expect(r.code, `tether ${verb.join(" ")}: ${r.stderr}${r.stdout}`).toBe(2);
      const { error } = JSON.parse(r.stdout) as { error: { code: string; message: string } };
      expect(error.code).toBe("invalid_setting");
      expect(error.message).toMatch(/^ELASTICSEARCH_CA_FINGERPRINT: the node's TLS handshake failed with "Invalid or malformed certificate": .*sends only its own certificate.*give ELASTICSEARCH_CA_FILE \(the CA's PEM file\) instead/);
      expect(r.stderr).toContain("give ELASTICSEARCH_CA_FILE");
    }
  });

  it("the drainer and the API refuse to start: one line naming the setting, exit 78", async () => {
    const services = { drainer: "services/drainer/src/main.ts", api: "services/annotations-api/src/main.ts" };
    for (const [kind, main] of Object.entries(services)) {
      const r = await run(join(repoRoot, main), [], { ...env(leafOnly.url), PORT: "0", METRICS_PORT: "0" });
      expect(r.code, `${kind}: ${r.stdout}${r.stderr}`).toBe(78);
      const fatal = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { level: number; invalidEnv?: Record<string, string> }).find((l) => l.level === 60);
      expect(fatal?.invalidEnv?.ELASTICSEARCH_CA_FINGERPRINT, `${kind}: ${r.stdout}`).toMatch(/give ELASTICSEARCH_CA_FILE/);
    }
  });

  it("a node that sends its CA in the chain passes the fingerprint check: what fails next is not the setting", async () => {
    const r = await run(cli, ["status", "--json"], env(withChain.url));
    // This endpoint closes every connection after the handshake: the engine reads unreachable.
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ indexes: [{ state: "unreachable" }], error: { code: "elasticsearch_unreachable" } });
    expect(r.stdout + r.stderr).not.toMatch(/malformed|ELASTICSEARCH_CA_FILE/);
  });
});
