import { describePermissionDenied, type RefusalContext } from "@tether/search-sink";
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

/** The 403 reason of a client error, when the engine refused a privilege. */
export function refusedReason(err: unknown): string | undefined {
  const { errors } = elasticsearchModule();
  if (!(err instanceof errors.ResponseError) || err.statusCode !== 403) return undefined;
  return (err.meta?.body as { error?: { reason?: string } } | undefined)?.error?.reason;
}

export function describeError(err: unknown, context: RefusalContext = {}): string {
  const { errors } = elasticsearchModule();
  if (err instanceof errors.ResponseError) {
    const body = err.meta?.body as { error?: { type?: string; reason?: string } } | undefined;
    const denied = err.statusCode === 403 ? describePermissionDenied(body?.error?.reason, context) : undefined;
    if (denied) return denied;
    return `HTTP ${err.statusCode ?? "?"}${body?.error?.type ? ` ${body.error.type}` : ""}${body?.error?.reason ? `: ${body.error.reason}` : ""}`;
  }
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
