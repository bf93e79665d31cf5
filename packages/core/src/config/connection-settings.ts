import { ConnectionSettingError } from "./connection-setting-error.js";
import { type ConnectionEnvironment, type ConnectionField, type ConnectionOptions, type EngineKind } from "./connection-fields.js";
import { both, fail, fromConfig, fromEnvironment, parseApiKey, parseCloudId, parseFingerprint, parseNodes, positiveInt, type Nodes, type Said, type Source } from "./connection-sources.js";

/**
 * How a process connects to its engine, decided from two sources: the process's environment
 * (`ELASTICSEARCH_*` or `OPENSEARCH_*`, read by `sinkEnvironment`) and the options of the
 * config's sink factory (`elasticsearch({ … })`, `opensearch({ … })`). Pure: no I/O (the files
 * it names are read by `readConnectionFiles`). Every process decides through this module: the
 * writer (`sinkFromConfig`), the services, the CLI and the drainer.
 *
 * Settings come in groups, and a group is taken whole from one source, never mixed:
 *
 * | group        | fields (variable suffix)                                                              |
 * | ------------ | ------------------------------------------------------------------------------------- |
 * | address      | url (`_URL`, one or several nodes, comma-separated) or cloudId (`_CLOUD_ID`, ES only) |
 * | credentials  | username + password (`_USERNAME`, `_PASSWORD`, or inside the URL), apiKey (`_API_KEY`, ES only), bearerToken (`_BEARER_TOKEN`), aws (`_AWS_REGION`, `_AWS_SERVICE`, OpenSearch only) |
 * | trust        | caFile (`_CA_FILE`) or caFingerprint (`_CA_FINGERPRINT`, ES only)                      |
 * | client cert  | clientCert + clientKey (`_CLIENT_CERT`, `_CLIENT_KEY`: PEM files, mutual TLS)          |
 * | timeout      | requestTimeoutMs (`_REQUEST_TIMEOUT_MS`)                                               |
 * | bulk size    | maxBulkBytes (`TETHER_BULK_MAX_BYTES`, either engine)                                  |
 *
 * Which source wins, per group:
 *
 * | # | the config's factory sets          | the environment sets | outcome                                                                 |
 * | - | ---------------------------------- | -------------------- | ----------------------------------------------------------------------- |
 * | 1 | nothing of the group               | nothing of the group | the default: http://127.0.0.1:9200 (9201 for OpenSearch), no credentials, the system's CAs, no client certificate, 10000 ms, 5 MiB |
 * | 2 | nothing of the group               | the group            | the environment's                                                       |
 * | 3 | the group                          | nothing of the group | the config's                                                            |
 * | 4 | the group                          | the group            | the config's, whole (a config `url` and an env cloud id: the url; a config API key and an env password: the API key alone) |
 *
 * And what no source may say (each an error naming the variable or option, before any request):
 *
 * | # | within one source                                                       | error                                    |
 * | - | ----------------------------------------------------------------------- | ---------------------------------------- |
 * | 5 | two kinds of credentials (API key and password, bearer and SigV4, …)    | names both                               |
 * | 6 | a url and a cloud id                                                    | names both                               |
 * | 7 | a CA file and a CA fingerprint                                          | names both                               |
 * | 8 | a client certificate without its key, or a key without its certificate | names the missing one                    |
 * | 9 | a username without a password, or a password without a username        | names the missing one                    |
 * | 10 | credentials inside the URL and a username or password variable too     | names both                               |
 * | 11 | a CA, a fingerprint or a client certificate with an `http://` node     | names the TLS setting                    |
 * | 12 | an AWS service without a region (a region alone signs for `es`)        | names the region                         |
 * | 13 | a setting the engine does not have (an OpenSearch API key or cloud id, SigV4 for Elasticsearch) | names it (config only: such variables are not read) |
 * | 14 | a malformed value: a node that is not an http(s) URL, a fingerprint that is not 64 hex digits, a timeout or size that is not a positive integer, a cloud id that is not `name:base64`, an API key that is neither `id:key` nor base64, a service other than `es` / `aoss` | names it, never quoting the value |
 *
 * Why whole groups: mixing halves of two sources is how a process ends up sending one
 * deployment's password with another's API key. A config that leaves a group out lets each
 * process's environment decide it, which is what one config serving every environment needs.
 */

export type ConnectionAuth =
  | { kind: "basic"; username: string; password: string }
  | { kind: "apiKey"; apiKey: string | { id: string; api_key: string } }
  | { kind: "bearer"; token: string }
  | { kind: "aws"; region: string; service: "es" | "aoss" };

/** One decided connection: what the sink's client is built from. */
export interface ResolvedConnection {
  kind: EngineKind;
  /** Node URLs without credentials (a client's own error messages can quote them). Empty with a cloud id. */
  nodes: string[];
  cloudId?: string;
  auth?: ConnectionAuth;
  /** Files to read, each with the setting that named it. */
  caFile?: { path: string; setting: string };
  /** Upper-case, colon-separated (`AA:BB:…`), as Node reports fingerprints. */
  caFingerprint?: string;
  clientCert?: { path: string; setting: string; keyPath: string; keySetting: string };
  requestTimeoutMs: number;
  maxBulkBytes: number;
  /** Which setting each group came from, for the start-up log (never a value). */
  from: { address: string; credentials?: string; trust?: string; clientCert?: string };
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BULK_BYTES = 5 * 1024 * 1024;
const DEFAULT_URL: Record<EngineKind, string> = { elasticsearch: "http://127.0.0.1:9200", opensearch: "http://127.0.0.1:9201" };

const GROUPS = {
  address: ["url", "cloudId"],
  credentials: ["username", "password", "apiKey", "bearerToken", "awsRegion", "awsService"],
  trust: ["caFile", "caFingerprint"],
  clientCert: ["clientCert", "clientKey"],
  timeout: ["requestTimeoutMs"],
  bulk: ["maxBulkBytes"],
} as const satisfies Record<string, readonly ConnectionField[]>;

/** The group from the config when it says anything of it (rows 3, 4), else from the environment (row 2). */
function pick(group: readonly ConnectionField[], config: Source, env: Source): Source {
  return group.some((f) => config[f]) ? config : env;
}

function credentials(kind: EngineKind, src: Source, inUrl: Nodes["userinfo"], urlSaid: Said | undefined): { auth?: ConnectionAuth; from?: string } {
  const { username, password, apiKey, bearerToken, awsRegion, awsService } = src;
  if (inUrl && urlSaid && (username || password)) both(src, urlSaid, (username ?? password)!, "credentials inside the URL and a username or password beside it: give one");
  if (username && !password) fail(src, username, `needs a password (${src.name === "config" ? `${kind}({ password })` : username.setting.replace(/USERNAME$/, "PASSWORD")})`);
  if (password && !username) fail(src, password, `needs a username (${src.name === "config" ? `${kind}({ username })` : password.setting.replace(/PASSWORD$/, "USERNAME")})`);
  const kinds: Said[] = [];
  if (username) kinds.push(username);
  else if (inUrl && urlSaid) kinds.push(urlSaid);
  for (const s of [apiKey, bearerToken, awsRegion ?? awsService]) if (s) kinds.push(s);
  if (kinds.length > 1) both(src, kinds[0], kinds[1], "two kinds of credentials: give one (basic auth, an API key, a bearer token or SigV4)");
  if (username && password) return { auth: { kind: "basic", username: username.value, password: password.value }, from: username.setting };
  if (inUrl && urlSaid) return { auth: { kind: "basic", ...inUrl }, from: urlSaid.setting };
  if (apiKey) return { auth: { kind: "apiKey", apiKey: parseApiKey(src, apiKey) }, from: apiKey.setting };
  if (bearerToken) return { auth: { kind: "bearer", token: bearerToken.value.trim() }, from: bearerToken.setting };
  if (awsRegion || awsService) {
    if (!awsRegion) {
      const regionName = src.name === "config" ? `${kind}({ aws.region })` : awsService!.setting.replace(/SERVICE$/, "REGION");
      throw new ConnectionSettingError(regionName, src.name, `required for SigV4 signing (${awsService!.setting} is set)`);
    }
    const service = awsService?.value ?? "es";
    if (service !== "es" && service !== "aoss") fail(src, awsService!, "must be es (OpenSearch Service) or aoss (OpenSearch Serverless)");
    return { auth: { kind: "aws", region: awsRegion.value.trim(), service: service as "es" | "aoss" }, from: awsRegion.setting };
  }
  return {};
}

/**
 * Decides one engine's connection from the environment (`env`, as `sinkEnvironment` read it)
 * and the config factory's options, following the table above. Throws `ConnectionSettingError`
 * naming the variable or option at fault.
 *
 * @example
 * const c = resolveConnection("elasticsearch", { apiKey: { variable: "ELASTICSEARCH_API_KEY", value: "id:key" } }, { url: "https://es:9200" });
 * c.auth; // { kind: "apiKey", apiKey: { id: "id", api_key: "key" } }
 */
export function resolveConnection(kind: EngineKind, env: ConnectionEnvironment, options: ConnectionOptions = {}): ResolvedConnection {
  const config = fromConfig(kind, options);
  const environment = fromEnvironment(env);

  // Each source's URL is read (and checked) on its own: credentials inside it are that source's.
  const configNodes = config.url ? parseNodes(config, config.url) : undefined;
  const environmentNodes = environment.url ? parseNodes(environment, environment.url) : undefined;
  const addr = pick(GROUPS.address, config, environment);
  both(addr, addr.url, addr.cloudId, "a URL and a cloud id: give one");
  const urlSaid = addr.url ?? (addr.cloudId ? undefined : { value: DEFAULT_URL[kind], setting: "the default URL" });
  const parsed: Nodes = (addr === config ? configNodes : environmentNodes) ?? (urlSaid ? parseNodes(addr, urlSaid) : { nodes: [] });
  if (addr.cloudId) parseCloudId(addr, addr.cloudId);

  const says = (s: Source, n: Nodes | undefined) => n?.userinfo !== undefined || GROUPS.credentials.some((f) => s[f]);
  const credSrc = says(config, configNodes) ? config : environment;
  const credNodes = credSrc === config ? configNodes : environmentNodes;
  const { auth, from: credentialsFrom } = credentials(kind, credSrc, credNodes?.userinfo, credSrc.url);

  const trust = pick(GROUPS.trust, config, environment);
  both(trust, trust.caFile, trust.caFingerprint, "a CA file and a CA fingerprint: give one");
  const cert = pick(GROUPS.clientCert, config, environment);
  if (cert.clientCert && !cert.clientKey) fail(cert, cert.clientCert, `needs its key (${cert.name === "config" ? `${kind}({ clientKey })` : cert.clientCert.setting.replace(/CERT$/, "KEY")})`);
  if (cert.clientKey && !cert.clientCert) fail(cert, cert.clientKey, `needs its certificate (${cert.name === "config" ? `${kind}({ clientCert })` : cert.clientKey.setting.replace(/KEY$/, "CERT")})`);
  const tlsSetting = trust.caFile ?? trust.caFingerprint ?? cert.clientCert;
  if (tlsSetting && parsed.nodes.some((n) => n.startsWith("http:"))) {
    fail(tlsSetting === cert.clientCert ? cert : trust, tlsSetting, `is a TLS setting, but ${urlSaid?.setting ?? "the URL"} names an http:// node: use https://`);
  }

  const timeoutSrc = pick(GROUPS.timeout, config, environment);
  const bulkSrc = pick(GROUPS.bulk, config, environment);
  const requestTimeoutMs = positiveInt(timeoutSrc, timeoutSrc.requestTimeoutMs) ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxBulkBytes = positiveInt(bulkSrc, bulkSrc.maxBulkBytes) ?? DEFAULT_MAX_BULK_BYTES;

  return {
    kind,
    nodes: parsed.nodes,
    ...(addr.cloudId ? { cloudId: addr.cloudId.value.trim() } : {}),
    ...(auth ? { auth } : {}),
    ...(trust.caFile ? { caFile: { path: trust.caFile.value, setting: trust.caFile.setting } } : {}),
    ...(trust.caFingerprint ? { caFingerprint: parseFingerprint(trust, trust.caFingerprint) } : {}),
    ...(cert.clientCert && cert.clientKey ? { clientCert: { path: cert.clientCert.value, setting: cert.clientCert.setting, keyPath: cert.clientKey.value, keySetting: cert.clientKey.setting } } : {}),
    requestTimeoutMs,
    maxBulkBytes,
    from: {
      address: (addr.cloudId ?? urlSaid)!.setting,
      ...(credentialsFrom ? { credentials: credentialsFrom } : {}),
      ...(tlsSetting && tlsSetting !== cert.clientCert ? { trust: tlsSetting.setting } : {}),
      ...(cert.clientCert ? { clientCert: cert.clientCert.setting } : {}),
    },
  };
}

/**
 * What a log line may say about a connection: the nodes (no credentials in them), the cloud
 * id's deployment name, and which setting each group came from — never a secret.
 *
 * @example
 * logger.info({ sink: describeConnection(c) }, "starting");
 */
export function describeConnection(c: ResolvedConnection): Record<string, unknown> {
  return {
    ...(c.cloudId ? { cloudId: c.cloudId.split(":")[0] } : { nodes: c.nodes }),
    auth: c.auth ? `${c.auth.kind}${c.auth.kind === "aws" ? ` (${c.auth.service}, ${c.auth.region})` : ""} from ${c.from.credentials}` : "none",
    ...(c.from.trust ? { trust: c.from.trust } : {}),
    ...(c.from.clientCert ? { clientCert: c.from.clientCert } : {}),
    requestTimeoutMs: c.requestTimeoutMs,
    maxBulkBytes: c.maxBulkBytes,
  };
}
