import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { ensureDebianPackage } from "./java-home.js";
import { runCommand } from "./run-command.js";

/** A private CA and what it signed, as PEM files in one folder. */
export interface TestCertificates {
  dir: string;
  /** The CA's certificate: what a client trusts (ELASTICSEARCH_CA_FILE). */
  caFile: string;
  /** SHA-256 fingerprint of the CA, upper-case and colon-separated (ELASTICSEARCH_CA_FINGERPRINT). */
  caFingerprint: string;
  /** The server's certificate followed by the CA's (a chain, as servers send it), for 127.0.0.1 and localhost. */
  serverCert: string;
  serverKey: string;
  /** A client certificate signed by the CA (mutual TLS), and its key. */
  clientCert: string;
  clientKey: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const r = await runCommand("openssl", args, { cwd, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`openssl ${args[0]} failed (exit ${r.code}): ${r.stderr.slice(-1000)}`);
}

/**
 * Makes (once per folder) a CA, a server certificate for 127.0.0.1 / localhost and a client
 * certificate, with the openssl command (Debian's `openssl`, installed when missing). A second
 * call finds the files and makes nothing.
 *
 * @example
 * const certs = await ensureTestCertificates(".cache/tls");
 * https.createServer({ cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey) }, …);
 */
export async function ensureTestCertificates(dir: string): Promise<TestCertificates> {
  mkdirSync(dir, { recursive: true });
  const at = (f: string) => join(dir, f);
  const out: Omit<TestCertificates, "caFingerprint"> = { dir, caFile: at("ca.crt"), serverCert: at("server.crt"), serverKey: at("server.key"), clientCert: at("client.crt"), clientKey: at("client.key") };
  if (![out.caFile, out.serverCert, out.serverKey, out.clientCert, out.clientKey].every((f) => existsSync(f))) {
    await ensureDebianPackage("openssl", "openssl");
    const days = "3650";
    await openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", days, "-subj", "/CN=Tether Test CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], dir);
    writeFileSync(at("server.ext"), "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n");
    writeFileSync(at("client.ext"), "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n");
    for (const [name, cn] of [["server", "127.0.0.1"], ["client", "tether-client"]] as const) {
      await openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}`], dir);
      await openssl(["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", `${name}.leaf.crt`, "-days", days, "-extfile", `${name}.ext`], dir);
    }
    // Servers send the CA after their own certificate: a client that pins the CA's fingerprint finds it there.
    writeFileSync(out.serverCert, readFileSync(at("server.leaf.crt"), "utf8") + readFileSync(out.caFile, "utf8"));
    writeFileSync(out.clientCert, readFileSync(at("client.leaf.crt"), "utf8"));
  }
  return { ...out, caFingerprint: new X509Certificate(readFileSync(out.caFile)).fingerprint256 };
}
