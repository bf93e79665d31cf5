import { AsyncLocalStorage } from "node:async_hooks";
import { context, ROOT_CONTEXT, trace, type Context, type ContextManager } from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter, type SpanProcessor } from "@opentelemetry/sdk-trace-base";

/**
 * Carries the active span across awaits, so spans started inside a drain pass (Elasticsearch
 * client requests) become its children.
 */
class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }

  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== "function") return target;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const manager = this;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(ctx, () => fn.apply(this, args));
    } as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

export type TracesExporter = "none" | "console";

export interface TracingOptions {
  /** The resource of every span (service.name, …). */
  resource?: Resource;
  /** More processors beside the exporter's (`startTelemetry` passes the OTLP batch processor). */
  spanProcessors?: SpanProcessor[];
}

export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Registers a BasicTracerProvider (and an AsyncLocalStorage context manager) for core's spans
 * (tether.drain_batch, tether.write, tether.direct_sync). Finished spans are printed to stdout
 * only with `exporter: "console"`; with "none" (the default) they are recorded and dropped; any
 * other SpanExporter (an in-memory one in tests) receives them. Processes start it through
 * `startTelemetry`, which adds OTLP export from the `OTEL_*` variables.
 *
 * @example
 * const tracing = startTracing("console");
 * await tracing.shutdown();
 */
export function startTracing(exporter: TracesExporter | SpanExporter = "none", opts: TracingOptions = {}): Tracing {
  const manager = new AsyncLocalContextManager().enable();
  const contextRegistered = context.setGlobalContextManager(manager);
  const target = exporter === "console" ? new ConsoleSpanExporter() : exporter === "none" ? undefined : exporter;
  const spanProcessors = [...(target ? [new SimpleSpanProcessor(target)] : []), ...(opts.spanProcessors ?? [])];
  const provider = new BasicTracerProvider({ spanProcessors, ...(opts.resource ? { resource: opts.resource } : {}) });
  const registered = trace.setGlobalTracerProvider(provider);
  return {
    async shutdown() {
      await provider.shutdown();
      if (registered) trace.disable();
      if (contextRegistered) context.disable();
    },
  };
}
