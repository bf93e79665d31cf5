import { ConnectionSettingError } from "./connection-setting-error.js";
import { CONNECTION_FIELDS, ONLY, type ConnectionEnvironment, type ConnectionField, type ConnectionOptions, type EngineKind } from "./connection-fields.js";

/**
 * The two sources of connection settings as `resolveConnection` reads them (each value with
 * the variable or option to blame), and the checks of one value. See connection-settings.ts
 * for the decision table.
 */

/** One source's view: a value and the name to blame for it. */
export interface Said {
  value: string;
  setting: string;
}
export type Source = { name: "environment" | "config" } & Partial<Record<ConnectionField, Said>>;

export function fromConfig(kind: EngineKind, o: ConnectionOptions): Source {
  const name = (field: string) => `${kind}({ ${field} })`;
  const s: Source = { name: "config" };
  const put = (field: ConnectionField, value: unknown, label: string = field) => {
    if (value === undefined || value === null || value === "") return;
    s[field] = { value: typeof value === "string" ? value : String(value), setting: name(label) };
  };
  put("url", Array.isArray(o.url) ? o.url.join(",") : o.url);
  for (const f of ["username", "password", "apiKey", "bearerToken", "cloudId", "caFile", "caFingerprint", "clientCert", "clientKey", "requestTimeoutMs", "maxBulkBytes"] as const) put(f, o[f]);
  put("awsRegion", o.aws?.region, "aws.region");
  put("awsService", o.aws?.service, "aws.service");
  for (const field of CONNECTION_FIELDS) {
    const only = ONLY[field];
    if (s[field] && only && only !== kind) throw new ConnectionSettingError(s[field].setting, "config", `${kind === "opensearch" ? "OpenSearch" : "Elasticsearch"} has no such setting (it is ${only === "elasticsearch" ? "Elasticsearch" : "OpenSearch"}'s)`);
  }
  return s;
}

export function fromEnvironment(env: ConnectionEnvironment): Source {
  const s: Source = { name: "environment" };
  for (const field of CONNECTION_FIELDS) {
    const said = env[field];
    if (said && said.value !== "") s[field] = { value: said.value, setting: said.variable };
  }
  return s;
}

export const fail = (src: Source, said: Said, problem: string): never => {
  throw new ConnectionSettingError(said.setting, src.name, problem);
};

export function both(src: Source, a: Said | undefined, b: Said | undefined, problem: string): void {
  if (a && b) throw new ConnectionSettingError(`${a.setting} and ${b.setting}`, src.name, problem);
}

export function positiveInt(src: Source, said: Said | undefined): number | undefined {
  if (!said) return undefined;
  const n = Number(said.value);
  if (!/^\d+$/.test(said.value.trim()) || !Number.isSafeInteger(n) || n <= 0) fail(src, said, "must be a positive integer");
  return n;
}

export interface Nodes {
  nodes: string[];
  /** Credentials found inside the URLs (row 10). */
  userinfo?: { username: string; password: string };
}

export function parseNodes(src: Source, said: Said): Nodes {
  const parts = said.value.split(",").map((p) => p.trim()).filter((p) => p !== "");
  if (parts.length === 0) fail(src, said, "names no node");
  const nodes: string[] = [];
  let userinfo: Nodes["userinfo"];
  parts.forEach((part, i) => {
    const which = parts.length > 1 ? `node ${i + 1} ` : "";
    let u: URL;
    try {
      u = new URL(part);
    } catch {
      return fail(src, said, `${which}is not a URL (expected http(s)://host:port)`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") fail(src, said, `${which}must be an http:// or https:// URL`);
    if (u.username || u.password) {
      const found = { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
      if (!found.username || !found.password) fail(src, said, `${which}carries a user without a password (or a password without a user)`);
      if (userinfo && (userinfo.username !== found.username || userinfo.password !== found.password)) fail(src, said, "its nodes carry different credentials");
      userinfo = found;
      u.username = "";
      u.password = "";
    }
    nodes.push(u.toString().replace(/\/$/, ""));
  });
  return { nodes, ...(userinfo ? { userinfo } : {}) };
}

export function parseCloudId(src: Source, said: Said): void {
  const [name, encoded, ...rest] = said.value.split(":");
  const decoded = encoded && rest.length === 0 && /^[A-Za-z0-9+/=_-]+$/.test(encoded) ? Buffer.from(encoded, "base64").toString("utf8") : "";
  const [host, esId] = decoded.split("$");
  if (!name || !host || !esId) fail(src, said, "is not an Elastic Cloud id (expected <deployment name>:<base64 of host$es-id$kibana-id>)");
}

export function parseApiKey(src: Source, said: Said): string | { id: string; api_key: string } {
  const v = said.value.trim();
  const colon = v.indexOf(":");
  if (colon > 0 && colon < v.length - 1) return { id: v.slice(0, colon), api_key: v.slice(colon + 1) };
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, "base64").toString("utf8").includes(":")) return v;
  return fail(src, said, "is neither `id:key` nor an encoded API key (base64 of id:key)");
}

export function parseFingerprint(src: Source, said: Said): string {
  const hex = said.value.replace(/[:\s]/g, "");
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) fail(src, said, "must be the SHA-256 fingerprint of the CA: 64 hex digits, colons allowed");
  return hex.toUpperCase().match(/../g)!.join(":");
}

