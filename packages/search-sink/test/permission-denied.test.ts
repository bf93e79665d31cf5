import { describe, expect, it } from "vitest";
import { describePermissionDenied } from "../src/index.js";

describe("reading an engine's refusal of a privilege", () => {
  it("names the user, the action, the index and the privilege Elasticsearch says would allow it", () => {
    const reason =
      "action [indices:admin/create] is unauthorized for user [tether_app] with effective roles [tether_app] on indices [shop_products__20260101], this action is granted by the index privileges [create_index,manage,all]";
    expect(describePermissionDenied(reason)).toBe(
      "permission denied: user tether_app may not indices:admin/create on index shop_products__20260101: grant the index privilege create_index (or manage, all)",
    );
  });

  it("reads cluster privileges, API keys and bulk shard actions too", () => {
    expect(describePermissionDenied("action [cluster:monitor/health] is unauthorized for user [u] with effective roles [r], this action is granted by the cluster privileges [monitor,manage,all]")).toBe(
      "permission denied: user u may not cluster:monitor/health: grant the cluster privilege monitor (or manage, all)",
    );
    expect(
      describePermissionDenied("action [indices:data/write/bulk[s]] is unauthorized for API key id [kid] of user [u] on indices [p_x], this action is granted by the index privileges [create_doc,create,delete,index,write,all]"),
    ).toBe("permission denied: API key id [kid] of user u may not indices:data/write/bulk[s] on index p_x: grant the index privilege create_doc (or create, delete, index, write, all)");
  });

  it("reads OpenSearch's security plugin, and leaves any other text alone", () => {
    expect(describePermissionDenied("no permissions for [indices:data/read/mget] and User [name=app, backend_roles=[], requestedTenant=null]")).toBe(
      "permission denied: user app may not indices:data/read/mget: grant a role with that action on the collection's index pattern (docs/connecting.md#roles)",
    );
    expect(describePermissionDenied("something else")).toBeUndefined();
    expect(describePermissionDenied(undefined)).toBeUndefined();
  });
});
