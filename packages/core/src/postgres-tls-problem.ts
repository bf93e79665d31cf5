/**
 * What went wrong when a TLS connection to Postgres failed, in words an operator can act on.
 * node-postgres reports these as Node's own TLS errors (no SQLSTATE): the server's certificate
 * did not verify against the CA given, the address is not one the certificate names, the server
 * has TLS off, or the CA file named in the connection string cannot be read.
 */

// Node's X509 verification codes (tls.TLSSocket#authorizationError) and its TLS errors.
const CERTIFICATE_CODES = new Set([
  "UNABLE_TO_GET_ISSUER_CERT", "UNABLE_TO_GET_ISSUER_CERT_LOCALLY", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT", "CERT_SIGNATURE_FAILURE", "CERT_NOT_YET_VALID", "CERT_HAS_EXPIRED", "CERT_REVOKED", "CERT_UNTRUSTED",
  "CERT_REJECTED", "INVALID_CA", "INVALID_PURPOSE", "CERT_CHAIN_TOO_LONG", "PATH_LENGTH_EXCEEDED", "HOSTNAME_MISMATCH",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE", "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY", "ERROR_IN_CERT_NOT_BEFORE_FIELD", "ERROR_IN_CERT_NOT_AFTER_FIELD",
]);
const FILE_PARAMETERS = ["sslrootcert", "sslcert", "sslkey"] as const;

function chain(err: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== "object" || depth > 8) return;
    out.push(e as Record<string, unknown>);
    visit((e as { cause?: unknown }).cause, depth + 1);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const x of errors) visit(x, depth + 1);
  };
  visit(err, 0);
  return out;
}

/** The file a connection string's sslrootcert / sslcert / sslkey names, by parameter. */
function namedFiles(connectionString: string | undefined): Map<string, string> {
  const files = new Map<string, string>();
  if (!connectionString) return files;
  try {
    const params = new URL(connectionString).searchParams;
    for (const p of FILE_PARAMETERS) {
      const v = params.get(p);
      if (v) files.set(v, p);
    }
  } catch {
    // not a URL: nothing to name
  }
  return files;
}

/**
 * The TLS problem behind a failed connection to Postgres, or undefined when the failure is not
 * about TLS. `connectionString` lets an unreadable CA file be named by its parameter.
 *
 * @example
 * postgresTlsProblem(err) // "TLS: the server's certificate did not verify (UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate); …"
 */
export function postgresTlsProblem(err: unknown, connectionString?: string): string | undefined {
  const files = namedFiles(connectionString);
  for (const e of chain(err)) {
    const code = typeof e.code === "string" ? e.code : "";
    // Node appends its own advice (--use-system-ca); the operator's remedy is the CA parameter.
    const message = typeof e.message === "string" ? e.message.replace(/; if the root CA is installed locally.*$/s, "") : "";
    if (CERTIFICATE_CODES.has(code)) {
      return `TLS: the server's certificate did not verify (${code}: ${message}); give the CA that signed it with ?sslmode=verify-full&sslrootcert=<file> in the connection string`;
    }
    if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
      return `TLS: the server's certificate does not name the address connected to (${code}: ${message}); connect by a name or IP address the certificate lists`;
    }
    if (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_") || code === "EPROTO") return `TLS: ${message} (${code})`;
    if (/^The server does not support SSL connections$/i.test(message)) {
      return "TLS: the server does not accept TLS connections (its ssl setting is off) while the connection string's sslmode asks for TLS";
    }
    const path = typeof e.path === "string" ? e.path : undefined;
    if (path && files.has(path) && typeof e.syscall === "string" && e.syscall === "open") {
      return `TLS: cannot read ${files.get(path)} ${path} (${code})`;
    }
  }
  return undefined;
}
