import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ElasticsearchSink } from "@tether/elasticsearch";
import { providedEngineUrl } from "@tether/testkit";

// Which client major talks to which server major. @tether/elasticsearch uses the 8.x client for
// Elasticsearch 8 and 9 alike: every request with a body (search, _mget, _bulk, index creation)
// carries `compatible-with=8`, which an 8.x server takes as its own format and a 9.x server
// answers through REST API compatibility; body-less requests (health, GET mapping) reach a 9.x
// server in its own format. A 9.x client sends `compatible-with=9`, which an 8.x server refuses.
// This file runs in the `elasticsearch` project (8.19) and in `elasticsearch-9` (see vitest.config.ts).
const url = providedEngineUrl("elasticsearch");
const sink = new ElasticsearchSink({ client: url });
// An index of this file's own, its shard started before the searches: a search over "*" also meets
// the indices other test files are creating, whose shards may not be assigned yet.
const index = `client-compat-${randomBytes(4).toString("hex")}`;
beforeAll(async () => {
  await sink.client.indices.create({ index, settings: { number_of_shards: 1, number_of_replicas: 0 }, wait_for_active_shards: 1 });
});
afterAll(async () => {
  await sink.client.indices.delete({ index }, { ignore: [404] });
  await sink.close();
});

// The integ-test distribution has no `GET /` (the rest-root module): the node's own info says its version.
async function serverMajor(): Promise<number> {
  const info = (await (await fetch(new URL("/_nodes/_local?filter_path=nodes.*.version", url))).json()) as { nodes: Record<string, { version: string }> };
  return Number(Object.values(info.nodes)[0]!.version.split(".")[0]);
}

const media = (major: number) => `application/vnd.elasticsearch+json; compatible-with=${major}`;
const searchAs = (major: number) =>
  fetch(new URL(`/${index}/_search?size=0`, url), { method: "POST", headers: { accept: media(major), "content-type": media(major) }, body: JSON.stringify({ query: { match_all: {} } }) });

describe("the Elasticsearch client's major against the server's", () => {
  it("is 8.x: a request with a body asks for the 8.x REST format, and the server answers in it", async () => {
    const sent: Record<string, unknown>[] = [];
    sink.client.diagnostic.on("request", (_err, event) => {
      if (event) sent.push(event.meta.request.params.headers ?? {});
    });
    const res = await sink.client.search({ index, size: 0, query: { match_all: {} } }, { meta: true });
    expect(sent.at(-1)).toMatchObject({ "content-type": media(8), accept: media(8) });
    expect(res.headers["content-type"]).toMatch(/compatible-with=8/);
    expect([8, 9]).toContain(await serverMajor());
  });

  it("would not reach an 8.x server with a 9.x client's format, and reaches 9.x with either", async () => {
    const major = await serverMajor();
    expect((await searchAs(8)).status).toBe(200);
    expect((await searchAs(9)).status).toBe(major >= 9 ? 200 : 400);
  });
});
