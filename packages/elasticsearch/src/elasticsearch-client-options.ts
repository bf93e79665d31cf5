import type { ClientOptions } from "@elastic/elasticsearch";
import { readConnectionFiles, type ResolvedConnection } from "@tether/core";

/**
 * The client options of a decided connection (`resolveConnection`): nodes without credentials
 * (the client's own error texts quote node URLs), the credentials as the client's `auth`, the
 * CA and client certificate read from their files, no client-side retries (the sink retries).
 * A CA fingerprint replaces chain verification by the client's own check of the CA that signed
 * the node's certificate, as Elasticsearch documents it.
 */
export function elasticsearchClientOptions(c: ResolvedConnection): ClientOptions {
  const files = readConnectionFiles(c);
  const auth = c.auth;
  return {
    ...(c.cloudId ? { cloud: { id: c.cloudId } } : { nodes: c.nodes }),
    ...(auth?.kind === "basic" ? { auth: { username: auth.username, password: auth.password } } : {}),
    ...(auth?.kind === "apiKey" ? { auth: { apiKey: auth.apiKey } } : {}),
    ...(auth?.kind === "bearer" ? { auth: { bearer: auth.token } } : {}),
    ...(c.caFingerprint ? { caFingerprint: c.caFingerprint } : {}),
    ...(files.ca || files.cert || c.caFingerprint
      ? { tls: { ...(files.ca ? { ca: files.ca } : {}), ...(files.cert ? { cert: files.cert, key: files.key } : {}), ...(c.caFingerprint ? { rejectUnauthorized: false } : {}) } }
      : {}),
    maxRetries: 0,
    requestTimeout: c.requestTimeoutMs,
  };
}
