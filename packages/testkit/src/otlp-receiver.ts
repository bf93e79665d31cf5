import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOn } from "./listen-on.js";

/** One export request as received. `json` is the decoded body of an `http/json` export. */
export interface OtlpRequest {
  signal: "traces" | "metrics" | "logs";
  contentType: string;
  body: Buffer;
  json?: OtlpJsonBody;
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
}
interface OtlpResourceGroup {
  resource?: { attributes?: OtlpAttribute[] };
  scopeSpans?: { spans?: { name: string; attributes?: OtlpAttribute[] }[] }[];
  scopeMetrics?: { metrics?: OtlpJsonMetric[] }[];
}
interface OtlpJsonMetric {
  name: string;
  unit?: string;
  sum?: { dataPoints?: unknown[] };
  gauge?: { dataPoints?: unknown[] };
  histogram?: { dataPoints?: unknown[] };
}
interface OtlpJsonBody {
  resourceSpans?: OtlpResourceGroup[];
  resourceMetrics?: OtlpResourceGroup[];
}

/** A span as seen by the receiver, with its resource's service.name. */
export interface ReceivedSpan {
  serviceName: string | undefined;
  name: string;
  attributes: Record<string, unknown>;
}

/** A metric as seen by the receiver, with its resource's service.name and its data point count. */
export interface ReceivedMetric {
  serviceName: string | undefined;
  name: string;
  unit: string | undefined;
  points: number;
}

export interface OtlpReceiver {
  /** Base URL for `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporters append `/v1/traces`, `/v1/metrics`). */
  url: string;
  requests: OtlpRequest[];
  /** Spans of every `http/json` traces export so far. */
  spans(): ReceivedSpan[];
  /** Metrics of every `http/json` metrics export so far. */
  metrics(): ReceivedMetric[];
  close(): Promise<void>;
}

function attributeValue(v: OtlpAttribute["value"]): unknown {
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue;
}

function attributes(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, attributeValue(a.value)]));
}

/**
 * A real OTLP/HTTP receiver on loopback, as an OpenTelemetry Collector's `otlp` receiver listens:
 * POST `/v1/traces`, `/v1/metrics`, `/v1/logs`, answered 200 with an empty export response.
 * JSON bodies (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) are decoded; protobuf ones are kept raw.
 *
 * @example
 * const otlp = await startOtlpReceiver();
 * spawnService("api", { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
 * await waitFor(() => otlp.spans().some((s) => s.name === "tether.write"), { what: "a write span" });
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const requests: OtlpRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "").split("?")[0];
      const signal = path === "/v1/traces" ? "traces" : path === "/v1/metrics" ? "metrics" : path === "/v1/logs" ? "logs" : undefined;
      if (req.method !== "POST" || !signal) {
        res.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      const contentType = String(req.headers["content-type"] ?? "");
      const entry: OtlpRequest = { signal, contentType, body };
      if (contentType.includes("json")) entry.json = JSON.parse(body.toString("utf8")) as OtlpJsonBody;
      requests.push(entry);
      const json = contentType.includes("json");
      res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" }).end(json ? "{}" : undefined);
    });
  });
  const port = await listenOn(server, 0, "127.0.0.1");
  const serviceOf = (g: OtlpResourceGroup) => attributes(g.resource?.attributes)["service.name"] as string | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    spans: () =>
      requests.flatMap((r) =>
        (r.json?.resourceSpans ?? []).flatMap((g) =>
          (g.scopeSpans ?? []).flatMap((s) => (s.spans ?? []).map((span) => ({ serviceName: serviceOf(g), name: span.name, attributes: attributes(span.attributes) }))),
        ),
      ),
    metrics: () =>
      requests.flatMap((r) =>
        (r.json?.resourceMetrics ?? []).flatMap((g) =>
          (g.scopeMetrics ?? []).flatMap((s) =>
            (s.metrics ?? []).map((m) => ({
              serviceName: serviceOf(g),
              name: m.name,
              unit: m.unit,
              points: (m.sum?.dataPoints ?? m.gauge?.dataPoints ?? m.histogram?.dataPoints ?? []).length,
            })),
          ),
        ),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
