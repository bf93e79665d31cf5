import type { IndexLayout } from "@tether/core";

/** One administrative request to the engine; a 404 resolves (status 404), other errors throw. */
export type AdminRequest = (method: "GET" | "HEAD" | "PUT" | "POST" | "DELETE", path: string, body?: unknown) => Promise<{ status: number; body: unknown }>;

const enc = encodeURIComponent;

/** What a concrete `name` is: an alias (with its indices), an index, or nothing. */
export async function indexLayout(request: AdminRequest, name: string): Promise<IndexLayout> {
  const alias = await request("GET", `/_alias/${enc(name)}`);
  if (alias.status === 200) return { kind: "alias", indices: Object.keys(alias.body as Record<string, unknown>).sort() };
  const index = await request("HEAD", `/${enc(name)}`);
  return index.status === 200 ? { kind: "index" } : { kind: "missing" };
}

/**
 * Points `alias` at `to` alone in one `_aliases` request (atomic). A concrete index of that name
 * is cloned to `keepAs` first, under a write block (writes wait it out as a retryable block),
 * then removed by the same atomic request that adds the alias.
 */
export async function swapAlias(request: AdminRequest, alias: string, to: string, keepAs?: string): Promise<void> {
  const layout = await indexLayout(request, alias);
  const actions: unknown[] = [];
  if (layout.kind === "index") {
    if (!keepAs) throw new Error(`${alias} is a concrete index: name the copy that keeps it (keepAs)`);
    await request("DELETE", `/${enc(keepAs)}`);
    await request("PUT", `/${enc(alias)}/_settings`, { "index.blocks.write": true });
    try {
      await request("POST", `/${enc(alias)}/_clone/${enc(keepAs)}?wait_for_active_shards=1`, { settings: { "index.blocks.write": null } });
      await request("GET", `/_cluster/health/${enc(keepAs)}?wait_for_status=yellow&timeout=60s`);
    } catch (err) {
      await request("PUT", `/${enc(alias)}/_settings`, { "index.blocks.write": null });
      throw err;
    }
    actions.push({ remove_index: { index: alias } });
  } else if (layout.kind === "alias") {
    for (const index of layout.indices) if (index !== to) actions.push({ remove: { index, alias } });
  }
  actions.push({ add: { index: to, alias, is_write_index: true } });
  await request("POST", "/_aliases", { actions });
}

/** Removes a concrete index; a missing one is fine. */
export async function deleteIndex(request: AdminRequest, name: string): Promise<void> {
  const layout = await indexLayout(request, name);
  if (layout.kind === "alias") throw new Error(`${name} is an alias, not an index: refusing to delete what it points at`);
  if (layout.kind === "index") await request("DELETE", `/${enc(name)}`);
}

/**
 * While nobody reads the index (a rebuild's load): no refresh, and the translog synced in the
 * background rather than on every bulk request (writes a crash loses are what the rebuild's
 * verify passes find and repair before the swap). `loading: false` restores the defaults.
 */
export async function setBulkLoading(request: AdminRequest, name: string, loading: boolean): Promise<void> {
  await request("PUT", `/${enc(name)}/_settings`, { index: { refresh_interval: loading ? "-1" : null, "translog.durability": loading ? "async" : null } });
}

/** Lifts the write block of a concrete index (a swap that died between its block and its clone). */
export async function releaseWriteBlock(request: AdminRequest, name: string): Promise<void> {
  if ((await indexLayout(request, name)).kind === "index") await request("PUT", `/${enc(name)}/_settings`, { "index.blocks.write": null });
}
