import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueueReindex, migrate } from "@tether/core";
import { annotationMigrations, annotations } from "@tether/annotations";
import { otlpSettings } from "@tether/service-kit";
import { createTestContext, startOtlpReceiver, waitFor, type OtlpReceiver, type TestContext } from "@tether/testkit";
import { spawnService, stopAll, type ServiceProcess } from "../scenarios/support/processes.js";

const post = (api: ServiceProcess, text: string) =>
  fetch(`${api.url}/api/annotations`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user: "acct:otel@example.com", uri: "https://example.com/otel", text }),
  });

/** Metric families of a Prometheus text exposition: name → type. */
function families(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1]!, m[2]!);
  return out;
}

describe("OpenTelemetry export configured by the OTEL_* variables", () => {
  let ctx: TestContext;
  let otlp: OtlpReceiver;
  const procs: ServiceProcess[] = [];
  let base: Record<string, string>;

  beforeAll(async () => {
    ctx = await createTestContext();
    await migrate(ctx.db, [annotationMigrations]);
    otlp = await startOtlpReceiver();
    base = { DATABASE_URL: ctx.databaseUrl, ELASTICSEARCH_URL: ctx.elasticsearchUrl, TETHER_INDEX_PREFIX: ctx.indexPrefix };
  });

  afterAll(async () => {
    await stopAll(procs);
    await otlp?.close();
    await ctx?.close();
  });

  it("exports nothing unless an endpoint or an otlp exporter is configured, and nothing at all when the SDK is disabled", () => {
    expect(otlpSettings({})).toMatchObject({ traces: { enabled: false }, metrics: { enabled: false } });
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" })).toMatchObject({ traces: { enabled: true }, metrics: { enabled: true } });
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_METRICS_EXPORTER: "none" })).toMatchObject({ traces: { enabled: true }, metrics: { enabled: false } });
    expect(otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" })).toMatchObject({ traces: { enabled: false }, metrics: { enabled: false } });
    expect(() => otlpSettings({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(/OTEL_TRACES_EXPORTER lists "zipkin"/);
    expect(() => otlpSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL is "grpc"/);
  });

  it("the API sends its spans and metrics, named with units and its service.name, to an OTLP/HTTP receiver", async () => {
    const api = await spawnService("api", {
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    procs.push(api);
    const res = await post(api, "traced");
    expect(res.status).toBe(201);

    const write = await waitFor(() => otlp.spans().find((s) => s.name === `tether.write ${annotations.name}`), { what: "the write span" });
    expect(write.serviceName).toBe("tether-api");
    const duration = await waitFor(() => otlp.metrics().find((m) => m.name === "tether_api_request_duration_seconds" && m.points > 0), {
      what: "the request duration histogram",
    });
    expect(duration).toMatchObject({ serviceName: "tether-api", unit: "s" });
    expect(otlp.metrics().some((m) => m.name === "tether_jobs_enqueued" && m.unit === "{job}")).toBe(true);
    // A bad setting is a start-up error naming it, not a silent fallback.
    const bad = await spawnService("api", { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }).catch((e: Error) => e);
    expect(String(bad)).toMatch(/exited \(\{"code":78[\s\S]*OTEL_EXPORTER_OTLP_PROTOCOL/);
  });

  it("the drainer exports its drain spans and metrics under OTEL_SERVICE_NAME with OTEL_RESOURCE_ATTRIBUTES", async () => {
    await enqueueReindex(ctx.db, annotations, { scope: "all" });
    const drainer = await spawnService("drainer", {
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_METRIC_EXPORT_INTERVAL: "500",
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_SERVICE_NAME: "orders-drainer",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
      TETHER_DRAIN_INTERVAL_MS: "200",
    });
    procs.push(drainer);
    const batch = await waitFor(() => otlp.spans().find((s) => s.name === "tether.drain_batch" && s.serviceName === "orders-drainer" && Number(s.attributes["tether.claimed"] ?? 1) > 0), {
      what: "a drain span",
    });
    expect(batch.serviceName).toBe("orders-drainer");
    const completed = await waitFor(() => otlp.metrics().find((m) => m.name === "tether_jobs_completed" && m.serviceName === "orders-drainer" && m.points > 0), {
      what: "the completed-jobs counter",
    });
    expect(completed.unit).toBe("{job}");
    expect(otlp.metrics().some((m) => m.name === "tether_drain_batch_duration_seconds" && m.unit === "s" && m.serviceName === "orders-drainer")).toBe(true);
    const resourceAttrs = otlp.requests
      .filter((r) => r.signal === "traces" && r.json)
      .flatMap((r) => r.json!.resourceSpans ?? [])
      .flatMap((g) => g.resource?.attributes ?? []);
    expect(resourceAttrs).toContainEqual({ key: "deployment.environment", value: { stringValue: "test" } });

    // The Prometheus endpoints beside OTLP: every duration in seconds, every counter a _total.
    const api = procs.find((p) => p.kind === "api")!;
    for (const url of [`${api.url}/metrics`, `${drainer.url}/metrics`]) {
      const types = families(await (await fetch(url)).text());
      expect(types.size).toBeGreaterThan(0);
      for (const [name, type] of types) {
        if (type === "counter") expect(name, url).toMatch(/_total$/);
        if (type === "histogram") expect(name, url).toMatch(/_seconds$|_bytes$/);
        if (/duration|_age/.test(name)) expect(name, url).toMatch(/_seconds(_total)?$/);
      }
    }
  });

  it("protobuf is the default protocol; OTEL_SDK_DISABLED and OTEL_*_EXPORTER=none send nothing", async () => {
    const before = otlp.requests.length;
    const proto = await spawnService("api", { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "100" });
    procs.push(proto);
    expect((await post(proto, "protobuf")).status).toBe(201);
    // SIGTERM flushes pending spans and a last metric collection before exit.
    expect((await proto.stop()).code).toBe(0);
    // (The earlier processes still export JSON meanwhile: look at the protobuf requests.)
    const sent = otlp.requests.slice(before).filter((r) => r.contentType === "application/x-protobuf");
    const traces = sent.filter((r) => r.signal === "traces");
    expect(traces.some((r) => r.body.includes(Buffer.from("tether-api")) && r.body.includes(Buffer.from(`tether.write ${annotations.name}`)))).toBe(true);
    expect(sent.some((r) => r.signal === "metrics" && r.body.includes(Buffer.from("tether_api_request_duration_seconds")))).toBe(true);

    const offs: Record<string, string>[] = [{ OTEL_SDK_DISABLED: "true" }, { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" }];
    for (const off of offs) {
      const mark = otlp.requests.filter((r) => r.contentType === "application/x-protobuf").length;
      const quiet = await spawnService("api", { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "100", OTEL_METRIC_EXPORT_INTERVAL: "200", ...off });
      procs.push(quiet);
      expect((await post(quiet, "quiet")).status).toBe(201);
      expect((await quiet.stop()).code).toBe(0);
      expect(otlp.requests.filter((r) => r.contentType === "application/x-protobuf").length, JSON.stringify(off)).toBe(mark);
    }
  });
});
