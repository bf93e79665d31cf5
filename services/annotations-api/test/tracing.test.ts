import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { startTracing, type Tracing } from "@tether/service-kit";
import { createApiContext, type ApiContext } from "./support/api-context.js";

describe("tracing", () => {
  let ctx: ApiContext;
  let tracing: Tracing;
  const spans = new InMemorySpanExporter();
  beforeAll(async () => {
    tracing = startTracing(spans);
    ctx = await createApiContext();
  });
  afterAll(async () => {
    await ctx.close();
    await tracing.shutdown();
  });

  it("records one span from the API write through its direct sync", async () => {
    const res = await ctx.app.inject({
      method: "POST",
      url: "/api/annotations",
      payload: { user: "acct:trace@example.com", uri: "https://example.com/t", text: "traced" },
    });
    expect(res.statusCode).toBe(201);
    const finished = spans.getFinishedSpans();
    const write = finished.find((s) => s.name === "tether.write annotation");
    const sync = finished.find((s) => s.name === "tether.direct_sync");
    expect(write).toBeDefined();
    expect(sync).toBeDefined();
    expect(sync!.parentSpanContext?.spanId).toBe(write!.spanContext().spanId);
    expect(sync!.spanContext().traceId).toBe(write!.spanContext().traceId);
    expect(sync!.attributes["tether.outcome"]).toBe("ok");
  });
});
