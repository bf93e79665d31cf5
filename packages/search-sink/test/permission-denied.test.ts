import { describe, expect, it } from "vitest";
import { describePermissionDenied, readRefusal } from "../src/index.js";

const drainerVerb = (verb: string) => ({ verb, role: "tether_drainer" });

describe("reading an engine's refusal of a privilege into the one sentence", () => {
  it("names the verb, the privilege the verb's documented role holds, the index and the role to grant it to", () => {
    const reason =
      "action [indices:admin/create] is unauthorized for user [tether_app] with effective roles [tether_app] on indices [shop_products__20260101], this action is granted by the index privileges [create_index,manage,all]";
    expect(describePermissionDenied(reason, { actor: drainerVerb("tether migrate") })).toBe(
      "permission denied: tether migrate needs the index privilege manage (or create_index, all) on shop_products__20260101; grant it to the role tether_drainer (docs/connecting.md#roles); the engine refused user tether_app indices:admin/create",
    );
  });

  it("fills in the index Elasticsearch leaves out of an alias lookup from the request", () => {
    const reason =
      "action [indices:admin/aliases/get] is unauthorized for user [u] with effective roles [r], this action is granted by the index privileges [view_index_metadata,manage,all]";
    expect(readRefusal(reason, { index: "shop_annotations", actor: drainerVerb("tether rebuild") })).toEqual({
      scope: "index",
      privilege: "manage",
      alternatives: ["view_index_metadata", "all"],
      index: "shop_annotations",
      action: "indices:admin/aliases/get",
      principal: "user u",
    });
    // The app's role holds view_index_metadata, not manage: that is the one it is told to grant.
    expect(describePermissionDenied(reason, { index: "shop_annotations", actor: { verb: "the API", role: "tether_app" } })).toMatch(
      /^permission denied: the API needs the index privilege view_index_metadata \(or manage, all\) on shop_annotations; grant it to the role tether_app \(docs\/connecting.md#roles\)/,
    );
  });

  it("reads cluster privileges (no index), API keys and bulk shard actions too", () => {
    expect(
      describePermissionDenied("action [cluster:monitor/health] is unauthorized for user [u] with effective roles [r], this action is granted by the cluster privileges [monitor,manage,all]", {
        index: "shop_x",
        actor: { verb: "the drainer", role: "tether_drainer" },
      }),
    ).toBe("permission denied: the drainer needs the cluster privilege monitor (or manage, all); grant it to the role tether_drainer (docs/connecting.md#roles); the engine refused user u cluster:monitor/health");
    expect(
      describePermissionDenied("action [indices:data/write/bulk[s]] is unauthorized for API key id [kid] of user [u] on indices [p_x], this action is granted by the index privileges [create_doc,create,delete,index,write,all]", {
        actor: drainerVerb("tether drain"),
      }),
    ).toMatch(/^permission denied: tether drain needs the index privilege write \(or create_doc, create, delete, index, all\) on p_x; .*the engine refused API key id \[kid\] of user u indices:data\/write\/bulk\[s\]$/);
  });

  it("reads OpenSearch's security plugin, which names no privilege and no index, and leaves any other text alone", () => {
    expect(describePermissionDenied("no permissions for [indices:data/read/mget] and User [name=app, backend_roles=[], requestedTenant=null]", { index: "shop_annotations", actor: drainerVerb("tether verify") })).toBe(
      "permission denied: tether verify needs the index privilege read (or indices_all) on shop_annotations; grant it to the role tether_drainer (docs/connecting.md#roles); the engine refused user app indices:data/read/mget",
    );
    expect(readRefusal("no permissions for [indices:admin/aliases/get] and User [name=app, backend_roles=[]]", { index: "i", actor: { verb: "the API", role: "tether_app" } })).toMatchObject({
      privilege: "indices:admin/aliases/get",
    });
    expect(readRefusal("no permissions for [cluster:monitor/health] and User [name=app]", { index: "i" })).toMatchObject({ scope: "cluster", privilege: "cluster_monitor" });
    expect(describePermissionDenied("something else")).toBeUndefined();
    expect(describePermissionDenied(undefined)).toBeUndefined();
  });

  it("without an actor, names the action and the role this process runs under", () => {
    expect(describePermissionDenied("no permissions for [indices:data/write/bulk] and User [name=app]", { index: "i" })).toBe(
      "permission denied: this process needs the index privilege write (or indices_all) on i; grant it to the role this process runs under (docs/connecting.md#roles); the engine refused user app indices:data/write/bulk",
    );
  });
});
