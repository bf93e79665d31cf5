import https from "node:https";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import bcrypt from "bcryptjs";
import { installElasticsearch, type EsInstall } from "./elasticsearch-service.js";
import { ensureTestAnalysisPlugin, TEST_ANALYSIS_PLUGIN } from "./es-test-analysis-plugin.js";
import { livePid } from "./maven-node.js";
import { runCommand } from "./run-command.js";
import type { ServiceRecord } from "./services-state.js";
import { ensureTestCertificates, type TestCertificates } from "./test-certificates.js";

/**
 * An Elasticsearch with security on, as teams run it: HTTPS with a private CA (made here), the
 * file realm holding one superuser that tests use to create the users, roles, API keys and
 * tokens they test with, API keys and tokens enabled. One node on its own port
 * (TETHER_SECURE_ES_PORT, default 9210), from the same integ-test distribution as the test node,
 * shared by every test file that needs it and by `scripts/services up secure-elasticsearch`.
 *
 * The integ-test distribution leaves out the analysis-common module, whose analysis components
 * the `.security` index mapping names: without them the node cannot create that index, and so
 * keeps no API keys or tokens. The node therefore runs from its own home (the distribution's
 * files hard-linked, so the plain test node is untouched) with the plugin
 * `packages/testkit/es-test-analysis`, built here from source, providing exactly those. The
 * token service is licensed: each start makes a new cluster on a self-generated trial license.
 */
export const DEFAULT_SECURE_ES_PORT = 9210;
const NODE_DIR = "secure-node";
const PID_FILE = "es.pid";
/** Holds the name of the plugin build the node was started with: a node started with another is restarted. */
const PLUGIN_MARK = "plugin-build";

export interface SecureElasticsearch {
  url: string;
  port: number;
  certs: TestCertificates;
  /** The file-realm superuser (test set-up only: users, roles, API keys, tokens). */
  admin: { username: string; password: string };
  /** One request over HTTPS, trusting the CA; as the superuser unless `authorization` is given. */
  request(method: string, path: string, body?: unknown, authorization?: string): Promise<{ status: number; body: any }>;
  /**
   * Sets file-realm roles (`roles.yml`: a role is the JSON of `PUT /_security/role`) and users
   * beside the superuser, and resolves once the node has reloaded them (each user
   * authenticates with its roles).
   */
  setFileRealm(realm: { roles: Record<string, unknown>; users: { name: string; password: string; roles: string[] }[] }): Promise<void>;
  record: ServiceRecord;
}

interface NodeState {
  port: number;
  adminPassword: string;
}

function httpsRequest(url: string, ca: Buffer, method: string, path: string, authorization: string, body?: unknown, timeoutMs = 30_000): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = https.request(new URL(path, url), { method, ca, timeout: timeoutMs, headers: { authorization, ...(payload ? { "content-type": "application/json", "content-length": String(payload.length) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString("base64")}`;

async function healthy(url: string, ca: Buffer, auth: string): Promise<boolean> {
  try {
    const r = await httpsRequest(url, ca, "GET", "/_cluster/health", auth, undefined, 2_000);
    return r.status === 200 && ["green", "yellow"].includes((r.body as { status?: string }).status ?? "");
  } catch {
    return false;
  }
}

/**
 * The node's own Elasticsearch home: the distribution's bin, lib and modules hard-linked (no
 * copy, and the shared install stays as it is) and a plugins folder holding the plugin.
 */
async function makeHome(install: EsInstall, home: string, plugin: string): Promise<void> {
  rmSync(home, { recursive: true, force: true });
  mkdirSync(join(home, "plugins"), { recursive: true });
  for (const d of ["bin", "lib", "modules"]) {
    const r = await runCommand("cp", ["-al", join(install.home, d), join(home, d)]);
    if (r.code !== 0) throw new Error(`cp -al ${join(install.home, d)} failed: ${r.stderr}`);
  }
  cpSync(plugin, join(home, "plugins", TEST_ANALYSIS_PLUGIN), { recursive: true });
}

function writeConfig(install: EsInstall, dir: string, port: number, adminPassword: string, certs: TestCertificates): void {
  const config = join(dir, "config");
  cpSync(join(install.home, "config"), config, { recursive: true, filter: (src) => !/elasticsearch\.yml$|users$|users_roles$/.test(src) });
  mkdirSync(join(config, "certs"), { recursive: true });
  for (const [from, to] of [[certs.caFile, "ca.crt"], [certs.serverCert, "server.crt"], [certs.serverKey, "server.key"]] as const) cpSync(from, join(config, "certs", to));
  // bcryptjs writes $2b$; Elasticsearch's file realm reads the same hash as $2a$.
  writeFileSync(join(config, "users"), `tether_admin:${bcrypt.hashSync(adminPassword, 10).replace(/^\$2b\$/, "$2a$")}\n`);
  writeFileSync(join(config, "users_roles"), "superuser:tether_admin\n");
  writeFileSync(
    join(config, "elasticsearch.yml"),
    [
      "# Written by packages/testkit secure-elasticsearch: one secured loopback node for the connection tests.",
      "cluster.name: tether-secure",
      "node.name: tether-secure",
      "discovery.type: single-node",
      "network.host: 127.0.0.1",
      `http.port: ${port}`,
      // Away from the test node's 9300-9399 and OpenSearch's 9400-9499.
      "transport.port: 9600-9699",
      "xpack.security.enabled: true",
      "xpack.security.enrollment.enabled: false",
      "xpack.security.http.ssl.enabled: true",
      "xpack.security.http.ssl.certificate: certs/server.crt",
      "xpack.security.http.ssl.key: certs/server.key",
      'xpack.security.http.ssl.certificate_authorities: ["certs/ca.crt"]',
      "xpack.security.transport.ssl.enabled: false",
      "xpack.security.authc.api_key.enabled: true",
      "xpack.security.authc.token.enabled: true",
      // The token service is a licensed feature: a new cluster starts on a 30-day trial.
      "xpack.license.self_generated.type: trial",
      // The longest allowed: a token made in a test file's set-up outlives its slowest run.
      "xpack.security.authc.token.timeout: 1h",
      "cluster.routing.allocation.disk.threshold_enabled: false",
      "action.destructive_requires_name: false",
      `path.data: ${join(dir, "data")}`,
      `path.logs: ${join(dir, "logs")}`,
      "",
    ].join("\n"),
  );
}

/** Writes a file so that a reader (the node's file watcher) sees the old content or the new, never half. */
function replaceFile(path: string, content: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o644 });
  renameSync(tmp, path);
}

async function setFileRealm(
  config: string,
  adminPassword: string,
  realm: { roles: Record<string, unknown>; users: { name: string; password: string; roles: string[] }[] },
  authenticate: (user: string, password: string) => Promise<{ status: number; body: any }>,
): Promise<void> {
  // JSON is YAML: each role is written as the body `PUT /_security/role` takes.
  replaceFile(join(config, "roles.yml"), Object.entries(realm.roles).map(([name, def]) => `${name}: ${JSON.stringify(def)}\n`).join(""));
  const hash = (p: string) => bcrypt.hashSync(p, 10).replace(/^\$2b\$/, "$2a$");
  replaceFile(join(config, "users"), [`tether_admin:${hash(adminPassword)}`, ...realm.users.map((u) => `${u.name}:${hash(u.password)}`)].join("\n") + "\n");
  const byRole = new Map<string, string[]>([["superuser", ["tether_admin"]]]);
  for (const u of realm.users) for (const r of u.roles) byRole.set(r, [...(byRole.get(r) ?? []), u.name]);
  replaceFile(join(config, "users_roles"), [...byRole].map(([r, names]) => `${r}:${names.join(",")}`).join("\n") + "\n");
  // The node polls its config files (every 5 s): wait until each user is known with its roles.
  const deadline = Date.now() + 60_000;
  for (const u of realm.users) {
    for (;;) {
      const r = await authenticate(u.name, u.password).catch(() => ({ status: 0, body: undefined }));
      if (r.status === 200 && JSON.stringify([...(r.body?.roles ?? [])].sort()) === JSON.stringify([...u.roles].sort())) break;
      if (Date.now() > deadline) throw new Error(`the secured node did not load user ${u.name} within 60 s (last answer ${r.status})`);
      await new Promise((res) => setTimeout(res, 250));
    }
  }
}

/** Takes a lock folder; a lock older than 10 minutes is from a process that died. */
async function withLock<T>(lock: string, fn: () => Promise<T>, whileWaiting: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      const done = await whileWaiting();
      if (done !== undefined) return done;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${lock}`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The secured node: found running (its state and certificates are kept in the Elasticsearch
 * install folder under .cache), else configured once and started. Safe to call from several
 * test files at once.
 *
 * @example
 * const es = await ensureSecureElasticsearch();
 * await es.request("PUT", "/_security/user/app", { password: "…", roles: ["tether_app"] });
 */
export async function ensureSecureElasticsearch(opts: { port?: number; heap?: string } = {}): Promise<SecureElasticsearch> {
  const install = await installElasticsearch();
  const dir = join(install.base, NODE_DIR);
  const stateFile = join(dir, "tether-secure.json");
  mkdirSync(dir, { recursive: true });
  const certs = await ensureTestCertificates(join(install.base, "secure-certs"));
  const plugin = await ensureTestAnalysisPlugin(install.home, install.version);
  const markFile = join(dir, PLUGIN_MARK);
  const current = () => existsSync(markFile) && readFileSync(markFile, "utf8") === basename(plugin);
  const ca = readFileSync(certs.caFile);
  const state: NodeState = existsSync(stateFile)
    ? (JSON.parse(readFileSync(stateFile, "utf8")) as NodeState)
    : { port: opts.port ?? Number(process.env.TETHER_SECURE_ES_PORT ?? DEFAULT_SECURE_ES_PORT), adminPassword: randomBytes(12).toString("hex") };
  writeFileSync(stateFile, JSON.stringify(state));
  const url = `https://127.0.0.1:${state.port}`;
  const auth = basic("tether_admin", state.adminPassword);
  const pidFile = join(dir, PID_FILE);
  const made = (detail: string, pid?: number): SecureElasticsearch => ({
    url,
    port: state.port,
    certs,
    admin: { username: "tether_admin", password: state.adminPassword },
    request: (method, path, body, authorization) => httpsRequest(url, ca, method, path, authorization ?? auth, body),
    setFileRealm: (realm) => setFileRealm(join(dir, "config"), state.adminPassword, realm, (u, p) => httpsRequest(url, ca, "GET", "/_security/_authenticate", basic(u, p), undefined, 5_000)),
    record: { url, via: "maven", detail, ...(pid ? { startedByUs: { pid } } : {}) },
  });
  const running = async () => (current() && (await healthy(url, ca, auth)) ? made(`secured Elasticsearch (HTTPS, private CA) in ${dir}, pid ${livePid(pidFile) ?? "?"}`, livePid(pidFile)) : undefined);
  const already = await running();
  if (already) return already;
  return withLock(`${dir}.lock`, async () => {
    const again = await running();
    if (again) return again;
    const old = livePid(pidFile);
    if (old) process.kill(old, "SIGKILL");
    rmSync(join(dir, "config"), { recursive: true, force: true });
    const home = join(dir, "home");
    await makeHome(install, home, plugin);
    writeFileSync(markFile, basename(plugin));
    writeConfig(install, dir, state.port, state.adminPassword, certs);
    // A fresh cluster each start (its trial license starts with it); tests keep nothing in it across restarts.
    rmSync(join(dir, "data"), { recursive: true, force: true });
    for (const d of ["data", "logs", "tmp"]) mkdirSync(join(dir, d), { recursive: true });
    if (install.asServiceUser) {
      const own = await runCommand("chown", ["-R", `${install.serviceUser}:`, dir]);
      if (own.code !== 0) throw new Error(`chown ${dir} failed: ${own.stderr}`);
    }
    const heap = opts.heap ?? "512m";
    const env = { ...process.env, ES_JAVA_HOME: install.javaHome, ES_PATH_CONF: join(dir, "config"), ES_JAVA_OPTS: `-Xms${heap} -Xmx${heap}`, ES_TMPDIR: join(dir, "tmp") };
    const cmd = join(home, "bin", "elasticsearch");
    rmSync(pidFile, { force: true });
    const start = install.asServiceUser
      ? await runCommand("runuser", ["-u", install.serviceUser, "--", cmd, "-d", "-p", pidFile], { env, timeoutMs: 300_000, cwd: dir })
      : await runCommand(cmd, ["-d", "-p", pidFile], { env, timeoutMs: 300_000, cwd: dir });
    if (start.code !== 0) throw new Error(`secured Elasticsearch failed to start (exit ${start.code}); logs in ${join(dir, "logs")}: ${(start.stdout + start.stderr).slice(-2000)}`);
    const deadline = Date.now() + 180_000;
    while (!(await healthy(url, ca, auth))) {
      if (Date.now() > deadline) throw new Error(`secured Elasticsearch at ${url} was not healthy within 180 s; logs in ${join(dir, "logs")}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const pid = livePid(pidFile);
    return made(`secured Elasticsearch (HTTPS, private CA) started in ${dir}, pid ${pid ?? "?"}`, pid);
  }, running);
}
