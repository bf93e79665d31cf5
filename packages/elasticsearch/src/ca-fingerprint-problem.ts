import { ConnectionSettingError, type ResolvedConnection } from "@tether/core";

/**
 * What the client answers when a CA fingerprint is set and the node's TLS chain holds no CA
 * certificate (only the node's own, as `elasticsearch-certutil cert --pem` writes it by
 * default): it checks the fingerprint against the chain's CA, and there is none.
 */
const NO_CA_IN_CHAIN = /Invalid or malformed certificate/;

/** Where a fingerprint came from, and what to give instead: the CA file's setting in the same source. */
export interface FingerprintTrust {
  setting: string;
  source: "environment" | "config";
  instead: string;
}

/** The fingerprint's setting of a decided connection, when trust is a fingerprint. */
export function fingerprintTrust(c: ResolvedConnection): FingerprintTrust | undefined {
  if (!c.caFingerprint) return undefined;
  const setting = c.from.trust ?? "ELASTICSEARCH_CA_FINGERPRINT";
  const source = setting.startsWith("ELASTICSEARCH_") ? "environment" : "config";
  return { setting, source, instead: source === "environment" ? "ELASTICSEARCH_CA_FILE" : "elasticsearch({ caFile })" };
}

/**
 * The refusal of a fingerprint the node's chain cannot satisfy, or undefined for any other
 * error: a `ConnectionSettingError` naming the fingerprint's setting and the CA file's as what
 * to use instead, so a process stops at its first request instead of retrying forever.
 *
 * @example
 * fingerprintProblem(new Error("Invalid or malformed certificate"), { setting: "ELASTICSEARCH_CA_FINGERPRINT", source: "environment", instead: "ELASTICSEARCH_CA_FILE" });
 */
export function fingerprintProblem(err: unknown, trust: FingerprintTrust | undefined): ConnectionSettingError | undefined {
  if (!trust) return undefined;
  for (let e = err, i = 0; e && i < 8; e = (e as { cause?: unknown }).cause, i++) {
    if (e instanceof Error && NO_CA_IN_CHAIN.test(e.message)) {
      return new ConnectionSettingError(
        trust.setting,
        trust.source,
        `the node's TLS handshake failed with "Invalid or malformed certificate": a CA fingerprint is checked against the CA certificate the node sends in its chain, and this node sends only its own certificate (elasticsearch-certutil cert --pem's default); give ${trust.instead} (the CA's PEM file) instead, or have the node send its CA in its chain (docs/connecting.md)`,
      );
    }
  }
  return undefined;
}
