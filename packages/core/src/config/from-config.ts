import type { Sink } from "../sink.js";
import { createWriter, type Writer, type WriterOptions } from "../write/write-path.js";
import { sinkEnvironment } from "./sink-environment.js";
import type { TetherConfig } from "./tether-config.js";

/**
 * The config's sink, built for this process the way the CLI and the drainer build theirs: the
 * engine's URL and TETHER_INDEX_PREFIX come from `env` (see `sinkEnvironment`), so an
 * application writes the very index names the drainer verifies. Pass `process.env`.
 *
 * @example
 * const sink = sinkFromConfig(config, process.env);
 */
export function sinkFromConfig(config: Pick<TetherConfig, "sink">, env: Readonly<Record<string, string | undefined>>): Sink {
  return config.sink(sinkEnvironment(env));
}

/**
 * A writer with the config's `options.writer` (direct-sync timeout, grace period, tag,
 * priority); what `overrides` sets wins, e.g. the sink and a logger.
 *
 * @example
 * const writer = writerFromConfig(config, { sink });
 */
export function writerFromConfig(config: Pick<TetherConfig, "options">, overrides: WriterOptions = {}): Writer {
  return createWriter({ ...config.options?.writer, ...overrides });
}
