import { permissionDenied, type RefusalActor, type SinkRefusal } from "@tether/core";

/**
 * Reads an engine's refusal of a privilege (HTTP 403 `security_exception`) into a `SinkRefusal`
 * (core's `permissionDenied` makes it the one sentence every process prints), filling in what
 * the engine's message leaves out. Elasticsearch names the action, who, usually the index, and
 * the privileges that would allow it:
 *
 *   action [indices:admin/create] is unauthorized for user [app] with effective roles [app] on
 *   indices [shop_products], this action is granted by the index privileges [create_index,manage,all]
 *
 * but no index for `indices:admin/aliases/get` (the request's index comes from the sink).
 * OpenSearch's security plugin names the action and the user only:
 *
 *   no permissions for [indices:data/write/bulk[s]] and User [name=app, backend_roles=[], requestedTenant=null]
 *
 * so the privilege comes from OPENSEARCH_PRIVILEGES below. Of several privileges, the one the
 * actor's documented role holds (docs/connecting.md#roles) is named: `manage` for the drainer
 * where the engine lists `view_index_metadata,manage,all`. Anything else is not a refusal.
 */
const ELASTICSEARCH = /action \[([^\]]+(?:\[s\])?)\] is unauthorized for (API key id \[[^\]]*\] of user|user|service account|run as user) \[([^\]]*)\](?:.*? on (?:restricted )?indices \[([^\]]*)\])?.*?this action is granted by the (index|cluster) privileges \[([^\]]*)\]/s;
const OPENSEARCH = /no permissions for \[([^\]]+(?:\[s\])?)\] and User \[name=([^,\]]*)/;

type Engine = "elasticsearch" | "opensearch";

/** The privileges of the two roles docs/connecting.md documents, per engine (its role blocks). */
const DOCUMENTED_ROLES: Record<Engine, Record<string, readonly string[]>> = {
  elasticsearch: { tether_drainer: ["read", "write", "manage", "monitor"], tether_app: ["read", "write", "view_index_metadata", "monitor"] },
  opensearch: {
    tether_drainer: ["read", "write", "manage", "cluster_monitor"],
    tether_app: ["read", "write", "indices:admin/mappings/get", "indices:admin/aliases/get", "cluster_monitor"],
  },
};

/** OpenSearch's action groups allowing an action, narrowest first (its message names none). */
const OPENSEARCH_PRIVILEGES: readonly [RegExp, SinkRefusal["scope"], (action: string) => string[]][] = [
  [/^cluster:monitor\//, "cluster", () => ["cluster_monitor", "cluster_all"]],
  [/^cluster:/, "cluster", () => ["cluster_all"]],
  [/^indices:data\/read\//, "index", () => ["read", "indices_all"]],
  [/^indices:data\/write\//, "index", () => ["write", "indices_all"]],
  [/^indices:admin\/create$/, "index", () => ["create_index", "manage", "indices_all"]],
  [/^indices:admin\/(aliases|mappings)\/get$/, "index", (action) => [action, "manage", "indices_all"]],
  [/^indices:admin\/aliases$/, "index", () => ["manage_aliases", "manage", "indices_all"]],
  [/^indices:/, "index", () => ["manage", "indices_all"]],
];

/** Where the refused request went and who made it: what the engine's message may leave out. */
export interface RefusalContext {
  /** The concrete index (with its prefix) the request named. */
  index?: string;
  actor?: RefusalActor;
}

function pick(engine: Engine, privileges: string[], actor: RefusalActor | undefined): { privilege: string; alternatives: string[] } {
  const held = actor ? DOCUMENTED_ROLES[engine][actor.role] : undefined;
  const privilege = privileges.find((p) => held?.includes(p)) ?? privileges[0] ?? "?";
  return { privilege, alternatives: privileges.filter((p) => p !== privilege) };
}

/**
 * The refusal an engine's 403 reason states, completed from `context`; undefined when the
 * reason is not a refused privilege.
 *
 * @example
 * readRefusal("action [indices:admin/aliases/get] is unauthorized for user [u] with effective roles [r], this action is granted by the index privileges [view_index_metadata,manage,all]", { index: "shop_annotations", actor: { verb: "tether rebuild", role: "tether_drainer" } });
 * // { scope: "index", privilege: "manage", alternatives: ["view_index_metadata", "all"], index: "shop_annotations", action: "indices:admin/aliases/get", principal: "user u" }
 */
export function readRefusal(reason: string | null | undefined, context: RefusalContext = {}): SinkRefusal | undefined {
  if (!reason) return undefined;
  const es = ELASTICSEARCH.exec(reason);
  if (es) {
    const [, action, who, name, indices, scope, privileges] = es;
    const principal = who!.startsWith("API key") ? `${who!.replace(/ of user$/, "")} of user ${name}` : `${who} ${name}`;
    const list = (privileges ?? "").split(",").map((p) => p.trim()).filter(Boolean);
    const index = scope === "index" ? (indices ?? context.index) : undefined;
    return { scope: scope as SinkRefusal["scope"], ...pick("elasticsearch", list, context.actor), ...(index ? { index } : {}), action: action!, principal };
  }
  const os = OPENSEARCH.exec(reason);
  if (os) {
    const action = os[1]!;
    const [, scope, allowing] = OPENSEARCH_PRIVILEGES.find(([re]) => re.test(action)) ?? [/./, "index" as const, () => ["indices_all"]];
    const index = scope === "index" ? context.index : undefined;
    return { scope, ...pick("opensearch", allowing(action), context.actor), ...(index ? { index } : {}), action, principal: `user ${os[2]}` };
  }
  return undefined;
}

/**
 * The one sentence for an engine's 403 reason (core's `permissionDenied`), or undefined when it
 * is not a refused privilege.
 *
 * @example
 * describePermissionDenied(reason, { index: "shop_annotations", actor: { verb: "the drainer", role: "tether_drainer" } });
 */
export function describePermissionDenied(reason: string | null | undefined, context: RefusalContext = {}): string | undefined {
  const refusal = readRefusal(reason, context);
  return refusal ? permissionDenied(refusal, context.actor) : undefined;
}
