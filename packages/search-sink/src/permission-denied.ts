/**
 * Reads an engine's refusal of a privilege (HTTP 403 `security_exception`) into one sentence
 * naming who was refused, what, on which index, and the privilege that would allow it, so an
 * operator fixes the role without reading a stack trace. Elasticsearch says all of it:
 *
 *   action [indices:admin/create] is unauthorized for user [app] with effective roles [app] on
 *   indices [shop_products], this action is granted by the index privileges [create_index,manage,all]
 *
 * OpenSearch's security plugin names the action and the user only:
 *
 *   no permissions for [indices:data/write/bulk[s]] and User [name=app, backend_roles=[], requestedTenant=null]
 *
 * Anything else reads as it came.
 */
const ELASTICSEARCH = /action \[([^\]]+(?:\[s\])?)\] is unauthorized for (API key id \[[^\]]*\] of user|user|service account|run as user) \[([^\]]*)\](?:.*? on (?:restricted )?indices \[([^\]]*)\])?.*?this action is granted by the (index|cluster) privileges \[([^\]]*)\]/s;
const OPENSEARCH = /no permissions for \[([^\]]+(?:\[s\])?)\] and User \[name=([^,\]]*)/;

export function describePermissionDenied(reason: string | null | undefined): string | undefined {
  if (!reason) return undefined;
  const es = ELASTICSEARCH.exec(reason);
  if (es) {
    const [, action, who, name, indices, scope, privileges] = es;
    const [first, ...others] = (privileges ?? "").split(",").map((p) => p.trim()).filter(Boolean);
    const principal = who!.startsWith("API key") ? `${who!.replace(/ of user$/, "")} of user ${name}` : `${who} ${name}`;
    return `permission denied: ${principal} may not ${action}${indices ? ` on index ${indices}` : ""}: grant the ${scope} privilege ${first ?? "?"}${others.length > 0 ? ` (or ${others.join(", ")})` : ""}`;
  }
  const os = OPENSEARCH.exec(reason);
  if (os) return `permission denied: user ${os[2]} may not ${os[1]}: grant a role with that action on the collection's index pattern (docs/connecting.md#roles)`;
  return undefined;
}
