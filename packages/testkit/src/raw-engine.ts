/**
 * Plain REST calls to the engine under a test, made behind tether's back (an operator's manual
 * edit, a script): the same requests work on Elasticsearch and OpenSearch, so the tests that
 * use them run against either sink.
 */
export interface RawEngine {
  /** A document as the engine holds it (realtime). */
  get(index: string, id: string): Promise<{ found: boolean; version?: number; source?: Record<string, unknown> }>;
  /** Writes with the engine's internal versioning (it bumps its own version). */
  index(index: string, id: string, document: Record<string, unknown>): Promise<void>;
  /** A partial update: bumps the engine's version, keeps the stored tether metadata. */
  update(index: string, id: string, partial: Record<string, unknown>): Promise<void>;
  delete(index: string, id: string): Promise<void>;
  /** Hits of a query, after a refresh. */
  count(index: string, query: Record<string, unknown>): Promise<number>;
}

/** `index` arguments are logical names; `indexPrefix` is prepended, as the sinks do. */
export function rawEngine(url: string, indexPrefix: string): RawEngine {
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const res = await fetch(new URL(path, url), {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (res.status >= 400 && res.status !== 404) throw new Error(`${method} ${path}: HTTP ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
    return { status: res.status, json };
  };
  const at = (index: string) => encodeURIComponent(`${indexPrefix}${index}`);
  return {
    async get(index, id) {
      const { json } = await call("GET", `/${at(index)}/_doc/${encodeURIComponent(id)}`);
      return json.found === true ? { found: true, version: Number(json._version), source: json._source as Record<string, unknown> } : { found: false };
    },
    async index(index, id, document) {
      await call("PUT", `/${at(index)}/_doc/${encodeURIComponent(id)}`, document);
    },
    async update(index, id, partial) {
      await call("POST", `/${at(index)}/_update/${encodeURIComponent(id)}`, { doc: partial });
    },
    async delete(index, id) {
      await call("DELETE", `/${at(index)}/_doc/${encodeURIComponent(id)}`);
    },
    async count(index, query) {
      await call("POST", `/${at(index)}/_refresh`);
      const { json } = await call("POST", `/${at(index)}/_count`, { query });
      return Number(json.count);
    },
  };
}

/** Deletes every index whose name starts with `prefix` (a test file's or a run's). */
export async function dropIndices(url: string, prefix: string): Promise<void> {
  await fetch(new URL(`/${prefix}*?expand_wildcards=all`, url), { method: "DELETE" }).catch(() => undefined);
}
