import { RetryableSinkError } from "@tether/core";

/**
 * The tester's own read of the engine, retried while the engine answers with a retryable error
 * (an OpenSearch shard briefly unavailable under load): the tester checks the engine, it is not
 * one of the faults the history injects. Any other error, or the same one past `attempts`, throws.
 */
export async function sinkRead<T>(read: () => Promise<T>, attempts = 20): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (!(err instanceof RetryableSinkError) || attempt >= attempts) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}
