import type { Collection } from "../collection.js";
import type { MigrationSet } from "../migrations/migration.js";
import type { Sink } from "../sink.js";
import type { RefusalActor } from "../sink-refusal.js";
import type { ConnectionEnvironment } from "./connection-fields.js";
import type { TetherOptions } from "./tether-options.js";

/**
 * What a process knows about its downstream from its own environment (ELASTICSEARCH_URL or
 * OPENSEARCH_URL, and TETHER_INDEX_PREFIX, read by `sinkEnvironment`). A sink factory uses these where the
 * config itself sets nothing, so one config serves every environment.
 */
export interface SinkEnvironment {
  /** The downstream node URL the process was given, if any. */
  url?: string;
  /** Prepended to every index name. Default "". */
  indexPrefix?: string;
  /**
   * The engine's other connection variables the process was given (credentials, TLS files,
   * timeout, bulk size), each with its variable's name; a factory decides them with its own
   * options through `resolveConnection`. `url` above is the same as `connection.url`.
   */
  connection?: ConnectionEnvironment;
  /**
   * Who the process is, for a refused privilege (`tether verify` under `tether_drainer`, the API
   * under `tether_app`): the sink's `SinkPermissionError` names the verb and the role to grant.
   */
  actor?: RefusalActor;
}

/** Builds the process's sink; `elasticsearch()` from `@tether/elasticsearch` returns one. */
export type SinkFactory = (env: SinkEnvironment) => Sink;

/** The contents of `tether.config.ts`: one description of what is synced where, for every process. */
export interface TetherConfig {
  /** The synced entity types. At least one. */
  collections: readonly Collection<any>[];
  /** The downstream store, e.g. `elasticsearch()` or `elasticsearch({ url: "http://es:9200" })`. */
  sink: SinkFactory;
  /** The application's own migrations, applied after tether's by `tether migrate` and the drainer. */
  migrations?: readonly MigrationSet[];
  /** Component options; every field optional, see `TetherOptions`. */
  options?: TetherOptions;
}

/** A config as a process loaded it: the file it came from, for error messages. */
export interface LoadedConfig {
  file: string;
  config: TetherConfig;
}

/**
 * Declares `tether.config.ts`. Identity at run time; it gives the file its types. The file must
 * use erasable TypeScript only (no enums, namespaces or parameter properties): installed
 * processes import it with Node's own type stripping.
 *
 * @example
 * // tether.config.ts
 * import { defineConfig } from "@tether/core";
 * import { elasticsearch } from "@tether/elasticsearch";
 * import { products } from "./src/products-collection.ts";
 *
 * export default defineConfig({
 *   collections: [products],
 *   sink: elasticsearch(),
 *   options: { drainer: { batchSize: 1000 } },
 * });
 */
export function defineConfig<const C extends TetherConfig>(config: C): C & TetherConfig {
  // The intersection keeps the literal types and adds every optional field a config may leave
  // out, so `config.options?.alerts` compiles for a config that sets no alerts.
  return config;
}
