import type { IndexCheck, MappingProblem } from "@tether/core";
import { indexLayout, type AdminRequest } from "./index-aliases.js";

const enc = encodeURIComponent;

/** What the bulk answers for an item when `require_alias` found no alias of that name. */
export const REQUIRE_ALIAS_REFUSAL = /\[require_alias\] request flag is \[true\]/;

/** Every field a mapping declares, by dotted path (sub-fields under `fields` too), with its type. */
export function flattenMapping(properties: Record<string, unknown> | undefined, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, raw] of Object.entries(properties ?? {})) {
    const def = (raw ?? {}) as { type?: string; properties?: Record<string, unknown>; fields?: Record<string, unknown> };
    const path = `${prefix}${name}`;
    // An object field has no type of its own in the engine's answer.
    if (def.type && def.type !== "object") out.set(path, def.type);
    for (const [sub, t] of flattenMapping(def.properties, `${path}.`)) out.set(sub, t);
    for (const [sub, t] of flattenMapping(def.fields, `${path}.`)) out.set(sub, t);
  }
  return out;
}

/** The declared fields `actual` lacks or maps to another type. */
export function mappingProblems(declared: Record<string, unknown>, actual: Record<string, unknown>): MappingProblem[] {
  const want = flattenMapping(declared.properties as Record<string, unknown> | undefined);
  const have = flattenMapping(actual.properties as Record<string, unknown> | undefined);
  const problems: MappingProblem[] = [];
  for (const [field, type] of want) {
    const got = have.get(field);
    if (got !== type) problems.push({ field, declared: type, actual: got ?? null });
  }
  return problems;
}

/** What `name` holds, and the fields of `mappings` its index (or each index behind it) lacks or contradicts. */
export async function checkIndex(request: AdminRequest, name: string, mappings: Record<string, unknown>): Promise<IndexCheck> {
  const layout = await indexLayout(request, name);
  if (layout.kind === "missing") return { kind: "missing" };
  const res = await request("GET", `/${enc(name)}/_mapping`);
  if (res.status === 404) return { kind: "missing" };
  const problems: MappingProblem[] = [];
  const seen = new Set<string>();
  for (const entry of Object.values(res.body as Record<string, { mappings?: Record<string, unknown> }>)) {
    for (const p of mappingProblems(mappings, entry.mappings ?? {})) {
      const key = `${p.field}\u0000${p.actual}`;
      if (!seen.has(key)) problems.push(p);
      seen.add(key);
    }
  }
  return { kind: "present", layout: layout.kind, problems };
}

const stamp = () => new Date().toISOString().replace(/[-:.]/g, "").replace(/Z$/, "").toLowerCase();

/**
 * Creates `<name>__<timestamp>` with `body` and the alias `name` in one request (the engine
 * makes both or neither), when `name` holds nothing yet. Two processes racing: the second's
 * request is refused (the alias has a write index already) and it reports nothing created.
 */
export async function provisionIndex(request: AdminRequest, name: string, body: { settings: Record<string, unknown>; mappings: Record<string, unknown> }): Promise<{ created: boolean }> {
  if ((await indexLayout(request, name)).kind !== "missing") return { created: false };
  try {
    await request("PUT", `/${enc(`${name}__${stamp()}`)}`, { ...body, aliases: { [name]: { is_write_index: true } } });
    return { created: true };
  } catch (err) {
    if ((await indexLayout(request, name)).kind !== "missing") return { created: false };
    throw err;
  }
}
