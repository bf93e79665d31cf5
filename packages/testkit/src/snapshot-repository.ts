/**
 * A snapshot repository on the engine's own disk (a `fs` repository under the node's
 * `path.repo`, which scripts/services sets), for scenarios that restore an index from a
 * snapshot as an operator does. Both engines answer these calls alike.
 */
export interface SnapshotRepository {
  /** Snapshots `index` (a concrete index name), waiting for completion; returns the snapshot's name. */
  snapshot(index: string): Promise<string>;
  /**
   * Restores `index` from `snapshot` over itself: the index is closed first (the engine restores
   * only over a closed index), and after the restore holds what it held when the snapshot was taken.
   */
  restore(snapshot: string, index: string): Promise<void>;
  /** Restores `index` from `snapshot` as a new index named `as` (its aliases left out): an older copy beside it. */
  restoreAs(snapshot: string, index: string, as: string): Promise<void>;
  /** Removes the repository and its snapshots. */
  remove(): Promise<void>;
}

async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? null : JSON.stringify(body) });
  const text = await res.text();
  const json = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 500)}`);
  return { status: res.status, json };
}

/** Registers a repository named `name` under the node's `path.repo`. */
export async function snapshotRepository(url: string, name: string): Promise<SnapshotRepository> {
  const nodes = (await call(url, "GET", "/_nodes/settings?filter_path=nodes.*.settings.path.repo")).json as { nodes?: Record<string, { settings?: { path?: { repo?: string | string[] } } }> };
  const repo = Object.values(nodes.nodes ?? {})[0]?.settings?.path?.repo;
  const base = Array.isArray(repo) ? repo[0] : repo;
  if (!base) throw new Error(`the engine at ${url} has no path.repo: start it with scripts/services (which sets it)`);
  await call(url, "PUT", `/_snapshot/${name}`, { type: "fs", settings: { location: `${base}/${name}` } });
  let n = 0;
  return {
    async snapshot(index) {
      const snap = `snap-${++n}`;
      await call(url, "PUT", `/_snapshot/${name}/${snap}?wait_for_completion=true`, { indices: index, include_global_state: false });
      return snap;
    },
    async restore(snapshot, index) {
      await call(url, "POST", `/${index}/_close`);
      // Its aliases as they were at the snapshot (the alias pointed at it then).
      await call(url, "POST", `/_snapshot/${name}/${snapshot}/_restore?wait_for_completion=true`, { indices: index, include_global_state: false, include_aliases: true });
    },
    async restoreAs(snapshot, index, as) {
      await call(url, "POST", `/_snapshot/${name}/${snapshot}/_restore?wait_for_completion=true`, {
        indices: index,
        include_global_state: false,
        include_aliases: false,
        rename_pattern: `^${index.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`,
        rename_replacement: as,
      });
    },
    async remove() {
      for (let i = 1; i <= n; i++) await call(url, "DELETE", `/_snapshot/${name}/snap-${i}`).catch(() => undefined);
      await call(url, "DELETE", `/_snapshot/${name}`).catch(() => undefined);
    },
  };
}
