import pRetry, { AbortError } from "p-retry";
import { ConnectionSettingError, PermanentSinkError, RetryableSinkError, SinkPermissionError, type RefusalActor, type SinkCallOptions, type SinkRefusal } from "@tether/core";

/** What one request to the engine carries: the caller's signal and a timeout. */
export interface EngineRequest {
  signal?: AbortSignal;
  timeoutMs: number;
}

/** How a client error reads: whether another attempt may succeed, and what to log. */
export interface EngineFailure {
  kind: "aborted" | "retryable" | "permanent";
  /** HTTP status of the whole request, when the engine answered. */
  status?: number;
  /** The engine's error type, e.g. `resource_already_exists_exception`. */
  type?: string;
  description: string;
  /** A refused privilege (HTTP 403), read with the request's index and the process's actor. */
  refusal?: SinkRefusal;
  /** Who the process is, for the sentence of a refusal. */
  actor?: RefusalActor;
  /**
   * An error no retry and no caller can get past, thrown as it is: a connection setting that
   * cannot work with this node (a CA fingerprint against a node that sends no CA in its chain).
   */
  fatal?: Error;
}

/**
 * Runs one request with retries (jittered backoff, 100 ms to 2 s): an abort (the caller's
 * signal, a deadline) and a permanent failure end at once; whatever still fails throws
 * `RetryableSinkError` or `PermanentSinkError` naming `what` and the engine's answer; a refused
 * privilege throws `SinkPermissionError` at once (core's one sentence for it).
 */
export async function callEngine<T>(
  what: string,
  opts: SinkCallOptions | undefined,
  defaults: { timeoutMs: number; retries: number },
  describe: (err: unknown) => EngineFailure,
  fn: (r: EngineRequest) => Promise<T>,
): Promise<T> {
  const r: EngineRequest = { ...(opts?.signal ? { signal: opts.signal } : {}), timeoutMs: opts?.timeoutMs ?? defaults.timeoutMs };
  try {
    return await pRetry(
      async () => {
        try {
          return await fn(r);
        } catch (err) {
          const f = describe(err);
          if (opts?.signal?.aborted || f.kind === "aborted") {
            const why = opts?.signal?.aborted ? describe(opts.signal.reason).description : f.description;
            throw new AbortError(new RetryableSinkError(`${what} aborted: ${why}`, { cause: err }));
          }
          if (f.fatal) throw new AbortError(f.fatal);
          if (f.refusal) throw new AbortError(new SinkPermissionError(f.refusal, f.actor, { cause: err }));
          if (f.kind === "permanent") throw new AbortError(new PermanentSinkError(`${what} failed: ${f.description}`, { cause: err }));
          throw new RetryableSinkError(`${what} failed: ${f.description}`, { cause: err });
        }
      },
      { retries: opts?.retries ?? defaults.retries, minTimeout: 100, maxTimeout: 2_000, factor: 3, randomize: true, ...(opts?.signal ? { signal: opts.signal } : {}) },
    );
  } catch (err) {
    // A setting that cannot work (EngineFailure.fatal) leaves as it is.
    if (err instanceof RetryableSinkError || err instanceof PermanentSinkError || err instanceof ConnectionSettingError) throw err;
    throw new RetryableSinkError(`${what} failed: ${describe(err).description}`, { cause: err });
  }
}
