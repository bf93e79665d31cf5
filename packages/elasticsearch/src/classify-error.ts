import { describePermissionDenied } from "@tether/search-sink";
import { elasticsearchModule } from "./elasticsearch-module.js";

/** Whole-request failures worth another attempt: no answer, 429, 5xx, timeouts. */
export function isRetryableRequestError(err: unknown): boolean {
  const { errors } = elasticsearchModule();
  if (err instanceof errors.ResponseError) {
    const s = err.statusCode ?? 0;
    return s === 429 || s >= 500;
  }
  return (
    err instanceof errors.ConnectionError ||
    err instanceof errors.TimeoutError ||
    err instanceof errors.NoLivingConnectionsError ||
    err instanceof errors.DeserializationError
  );
}

export function describeError(err: unknown): string {
  const { errors } = elasticsearchModule();
  if (err instanceof errors.ResponseError) {
    const body = err.meta?.body as { error?: { type?: string; reason?: string } } | undefined;
    const denied = err.statusCode === 403 ? describePermissionDenied(body?.error?.reason) : undefined;
    if (denied) return `HTTP 403 ${denied}`;
    return `HTTP ${err.statusCode ?? "?"}${body?.error?.type ? ` ${body.error.type}` : ""}${body?.error?.reason ? `: ${body.error.reason}` : ""}`;
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
