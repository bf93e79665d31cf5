import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureDebianPackage } from "./java-home.js";
import { runCommand } from "./run-command.js";

/** A certificate and its key, as PEM text and as files. */
export interface IssuedCertificate {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
}

/** A certificate authority generated for one test run. */
export interface TestCa {
  /** The CA certificate (what a client trusts), as PEM text and as a file. */
  cert: string;
  certFile: string;
  /** A server certificate for `hosts` (IP addresses and DNS names) signed by this CA. */
  issue(name: string, hosts: readonly string[]): Promise<IssuedCertificate>;
  /** Removes its folder (keys included). */
  close(): void;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const r = await runCommand("openssl", args, { cwd, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`openssl ${args.slice(0, 2).join(" ")} failed (exit ${r.code}): ${r.stderr.slice(-1000)}`);
}

// P-256 keys: generated in milliseconds, and every TLS stack here (Node, Postgres, Java) takes them.
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/**
 * Generates a CA (valid two days) with the openssl command line, in a temporary folder.
 *
 * @example
 * const ca = await createTestCa("Tether test CA");
 * const server = await ca.issue("postgres", ["127.0.0.1", "localhost"]);
 * // … the server uses server.certFile / server.keyFile, the client trusts ca.certFile …
 * ca.close();
 */
export async function createTestCa(commonName = "Tether test CA"): Promise<TestCa> {
  await ensureDebianPackage("openssl", "openssl");
  const dir = mkdtempSync(join(tmpdir(), "tether-ca-"));
  await openssl(["req", "-x509", ...EC_KEY, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", `/CN=${commonName}`,
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], dir);
  const certFile = join(dir, "ca.crt");
  let serial = 0;
  return {
    cert: readFileSync(certFile, "utf8"),
    certFile,
    async issue(name, hosts) {
      if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`certificate name "${name}": use a-z, 0-9 and -`);
      const san = hosts.map((h) => (/^[\d.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(",");
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`);
      await openssl(["req", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${hosts[0] ?? name}`], dir);
      await openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", String(++serial + 1000),
        "-out", `${name}.crt`, "-days", "2", "-extfile", `${name}.ext`], dir);
      const out = { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`) };
      return { ...out, cert: readFileSync(out.certFile, "utf8"), key: readFileSync(out.keyFile, "utf8") };
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
