import { readFileSync } from "node:fs";
import { ConnectionSettingError } from "./connection-setting-error.js";
import type { ResolvedConnection } from "./connection-settings.js";

/** The PEM files a connection names, read once when its client is built. */
export interface ConnectionFiles {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

function readPem(path: string, setting: string, what: "CERTIFICATE" | "PRIVATE KEY"): Buffer {
  let body: Buffer;
  try {
    body = readFileSync(path);
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "is a directory" : (code ?? "unreadable");
    throw new ConnectionSettingError(setting, setting.includes("(") ? "config" : "environment", `cannot read ${path}: ${why}`);
  }
  const text = body.toString("utf8");
  // "-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----".
  const looksRight = what === "CERTIFICATE" ? text.includes("-----BEGIN CERTIFICATE-----") : /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text);
  if (!looksRight) throw new ConnectionSettingError(setting, setting.includes("(") ? "config" : "environment", `${path} holds no PEM ${what === "CERTIFICATE" ? "certificate" : "private key"}`);
  return body;
}

/**
 * Reads the CA and client certificate files a resolved connection names. Throws
 * `ConnectionSettingError` naming the variable or option of a file that is missing, unreadable
 * or not PEM (a key file's content is never quoted).
 *
 * @example
 * const files = readConnectionFiles(resolveConnection("elasticsearch", env.connection ?? {}, opts));
 */
export function readConnectionFiles(c: Pick<ResolvedConnection, "caFile" | "clientCert">): ConnectionFiles {
  return {
    ...(c.caFile ? { ca: readPem(c.caFile.path, c.caFile.setting, "CERTIFICATE") } : {}),
    ...(c.clientCert ? { cert: readPem(c.clientCert.path, c.clientCert.setting, "CERTIFICATE"), key: readPem(c.clientCert.keyPath, c.clientCert.keySetting, "PRIVATE KEY") } : {}),
  };
}
