import { chownSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_ES_VERSION, installElasticsearch, type EsInstall } from "./elasticsearch-service.js";
import { freePort } from "./free-port.js";
import { runCommand } from "./run-command.js";

/** One node of a test cluster: its own config, data and log folders, HTTP and transport ports. */
export interface ClusterNode {
  readonly name: string;
  readonly httpPort: number;
  readonly transportPort: number;
  readonly url: string;
  /** Pid while running, undefined once killed or stopped. */
  readonly pid: number | undefined;
}

/** A multi-node Elasticsearch cluster of the test's own, on loopback. */
export interface ElasticsearchCluster {
  readonly nodes: readonly ClusterNode[];
  /** Every node's HTTP URL (give all of them to a client: it fails over). */
  readonly urls: string[];
  /** SIGKILL, as a crash: no shard hand-off, no flush. */
  kill(node: number): void;
  /** Graceful stop (SIGTERM), waiting for the process to exit. */
  stop(node: number): Promise<void>;
  /** Starts a node that was killed or stopped, on its old ports and data; waits until it joined. */
  start(node: number): Promise<void>;
  /** Waits until the cluster health reaches `status` with `nodes` nodes (default: all running). */
  waitForHealth(status: "green" | "yellow", nodes?: number, timeoutMs?: number): Promise<void>;
  /** Stops every node and removes the folders. */
  close(): Promise<void>;
}

export interface ElasticsearchClusterOptions {
  /** Default 3. */
  size?: number;
  version?: string;
  /** Heap per node. Default 384m (three nodes share the machine with everything else). */
  heap?: string;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function health(url: string, timeoutMs = 2_000): Promise<{ status: string; number_of_nodes: number } | undefined> {
  try {
    const res = await fetch(new URL("/_cluster/health", url), { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok && res.status !== 408) return undefined;
    return (await res.json()) as { status: string; number_of_nodes: number };
  } catch {
    return undefined;
  }
}

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts an N-node cluster from the same integ-test distribution the single test node uses:
 * each node with its own config folder (ES_PATH_CONF), data and logs under a temporary folder,
 * and its own HTTP and transport ports on 127.0.0.1. The shared node's folders are not touched.
 *
 * @example
 * const cluster = await startElasticsearchCluster();
 * cluster.kill(1);                       // a data node crashes
 * await cluster.start(1);                // and comes back on its old data
 * await cluster.waitForHealth("green");
 * await cluster.close();
 */
export async function startElasticsearchCluster(opts: ElasticsearchClusterOptions = {}): Promise<ElasticsearchCluster> {
  const size = opts.size ?? 3;
  const install: EsInstall = await installElasticsearch(opts.version ?? DEFAULT_ES_VERSION);
  const root = mkdtempSync(join(tmpdir(), "tether-es-cluster-"));
  const ports = await Promise.all(Array.from({ length: size * 2 }, () => freePort()));
  const specs = Array.from({ length: size }, (_, i) => ({ name: `tether-n${i}`, httpPort: ports[2 * i]!, transportPort: ports[2 * i + 1]!, dir: join(root, `n${i}`) }));
  const pids: (number | undefined)[] = specs.map(() => undefined);
  let owner: { uid: number; gid: number } | undefined;
  if (install.asServiceUser) {
    const [u, g] = await Promise.all([runCommand("id", ["-u", install.serviceUser]), runCommand("id", ["-g", install.serviceUser])]);
    owner = { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
  }
  const chownTree = async (path: string) => {
    if (!owner) return;
    const r = await runCommand("chown", ["-R", `${owner.uid}:${owner.gid}`, path]);
    if (r.code !== 0) throw new Error(`chown ${path} failed: ${r.stderr}`);
  };

  for (const s of specs) {
    mkdirSync(join(s.dir, "data"), { recursive: true });
    mkdirSync(join(s.dir, "logs"), { recursive: true });
    cpSync(join(install.home, "config"), join(s.dir, "config"), { recursive: true, filter: (src) => !src.endsWith("elasticsearch.yml") });
    writeFileSync(
      join(s.dir, "config", "elasticsearch.yml"),
      [
        "# A node of a test cluster on loopback (packages/testkit elasticsearch-cluster).",
        "cluster.name: tether-test-cluster",
        `node.name: ${s.name}`,
        "network.host: 127.0.0.1",
        `http.port: ${s.httpPort}`,
        `transport.port: ${s.transportPort}`,
        `discovery.seed_hosts: [${specs.map((o) => `"127.0.0.1:${o.transportPort}"`).join(", ")}]`,
        `cluster.initial_master_nodes: [${specs.map((o) => `"${o.name}"`).join(", ")}]`,
        "xpack.security.enabled: false",
        "action.destructive_requires_name: false",
        // Disks here may be nearly full: no watermark may block allocation behind a test's back.
        "cluster.routing.allocation.disk.threshold_enabled: false",
        `path.data: ${join(s.dir, "data")}`,
        `path.logs: ${join(s.dir, "logs")}`,
        "",
      ].join("\n"),
    );
  }
  if (owner) chownSync(root, owner.uid, owner.gid);
  await chownTree(root);

  const launch = async (i: number) => {
    const s = specs[i]!;
    const pidFile = join(s.dir, "es.pid");
    rmSync(pidFile, { force: true });
    const heap = opts.heap ?? "384m";
    const env = { ...process.env, ES_JAVA_HOME: install.javaHome, ES_PATH_CONF: join(s.dir, "config"), ES_JAVA_OPTS: `-Xms${heap} -Xmx${heap}`, ES_TMPDIR: join(s.dir, "tmp") };
    mkdirSync(join(s.dir, "tmp"), { recursive: true });
    await chownTree(join(s.dir, "tmp"));
    const cmd = join(install.home, "bin", "elasticsearch");
    const r = install.asServiceUser
      ? await runCommand("runuser", ["-u", install.serviceUser, "--", cmd, "-d", "-p", pidFile], { env, timeoutMs: 300_000, cwd: s.dir })
      : await runCommand(cmd, ["-d", "-p", pidFile], { env, timeoutMs: 300_000, cwd: s.dir });
    if (r.code !== 0) throw new Error(`node ${s.name} failed to start (exit ${r.code}); logs in ${join(s.dir, "logs")}: ${(r.stdout + r.stderr).slice(-1500)}`);
    pids[i] = Number(readFileSync(pidFile, "utf8").trim());
  };

  const cluster: ElasticsearchCluster = {
    nodes: specs.map((s, i) => ({
      name: s.name,
      httpPort: s.httpPort,
      transportPort: s.transportPort,
      url: `http://127.0.0.1:${s.httpPort}`,
      get pid() {
        return alive(pids[i]) ? pids[i] : undefined;
      },
    })),
    urls: specs.map((s) => `http://127.0.0.1:${s.httpPort}`),
    kill(i) {
      const pid = pids[i];
      if (alive(pid)) process.kill(pid!, "SIGKILL");
      pids[i] = undefined;
    },
    async stop(i) {
      const pid = pids[i];
      if (alive(pid)) {
        process.kill(pid!, "SIGTERM");
        const deadline = Date.now() + 60_000;
        while (alive(pid) && Date.now() < deadline) await sleep(200);
        if (alive(pid)) process.kill(pid!, "SIGKILL");
      }
      pids[i] = undefined;
    },
    async start(i) {
      await launch(i);
      const url = cluster.urls[i]!;
      const deadline = Date.now() + 180_000;
      for (;;) {
        const h = await health(url);
        const running = pids.filter(alive).length;
        if (h && h.number_of_nodes >= running) return;
        if (Date.now() > deadline) throw new Error(`node ${specs[i]!.name} did not join within 180 s (see ${join(specs[i]!.dir, "logs")})`);
        await sleep(500);
      }
    },
    async waitForHealth(status, nodes, timeoutMs = 180_000) {
      const want = nodes ?? pids.filter(alive).length;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        for (const [i, url] of cluster.urls.entries()) {
          if (!alive(pids[i])) continue;
          const res = await fetch(new URL(`/_cluster/health?wait_for_status=${status}&wait_for_nodes=${want}&timeout=5s`, url), { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
          const h = res ? ((await res.json().catch(() => undefined)) as { timed_out?: boolean; status?: string } | undefined) : undefined;
          if (res?.ok && h && !h.timed_out) return;
          break;
        }
        if (Date.now() > deadline) throw new Error(`cluster not ${status} with ${want} nodes within ${timeoutMs} ms`);
        await sleep(500);
      }
    },
    async close() {
      await Promise.all(specs.map((_, i) => cluster.stop(i)));
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await Promise.all(specs.map((_, i) => launch(i)));
    await cluster.waitForHealth("green", size);
  } catch (err) {
    await cluster.close().catch(() => undefined);
    throw err;
  }
  return cluster;
}
