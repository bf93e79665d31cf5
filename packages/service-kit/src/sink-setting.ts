import { str } from "envalid";
import { ConnectionSettingError, describeConnection, readConnectionFiles, resolveConnection, sinkEnvironment, type ProcessSinkEnvironment, type SinkKind } from "@tether/core";
import { SINK_KINDS } from "@tether/core/internal";
import { EXIT_CODES, fatalLine } from "./fatal-line.js";

export { SINK_KINDS, type SinkKind };

/**
 * The envalid specs of the sink settings every process shares. The URLs are checked (one node
 * or several, comma-separated) with the engine's other connection variables by `sinkSetting`.
 */
export const sinkEnvSpecs = {
  /** Which downstream: "elasticsearch" (default) or "opensearch". */
  TETHER_SINK: str({ default: "elasticsearch", choices: SINK_KINDS, desc: "the downstream: elasticsearch | opensearch" }),
  ELASTICSEARCH_URL: str({ default: undefined, desc: "Elasticsearch node URL(s), comma-separated (TETHER_SINK=elasticsearch)" }),
  OPENSEARCH_URL: str({ default: undefined, desc: "OpenSearch node URL(s), comma-separated (TETHER_SINK=opensearch)" }),
};

export interface SinkSetting {
  kind: SinkKind;
  /** The node URLs without credentials, or the cloud id's deployment (the address for messages and logs). */
  url: string;
  /** What may be logged of the connection (nodes, where the credentials came from; never a secret). */
  connection: Record<string, unknown>;
  /** The sink variables as read by core's `sinkEnvironment`: hand them to the config's sink factory. */
  environment: ProcessSinkEnvironment;
}

/**
 * Resolves the chosen sink and its connection (core's `sinkEnvironment` and
 * `resolveConnection`, the one reading every process shares) from the environment alone,
 * reading the CA and client certificate files it names: a missing URL, a malformed or
 * contradictory setting or an unreadable file throws, naming the variable (a
 * `ConnectionSettingError`, or an `Error` for TETHER_SINK and a missing URL). The process hands
 * `environment` to its config's sink factory (`elasticsearch()` or `opensearch()`).
 *
 * @example
 * const setting = sinkSetting(process.env);
 * const sink = config.sink(setting.environment);
 */
export function sinkSetting(env: Readonly<Record<string, string | undefined>>): SinkSetting {
  let read: ProcessSinkEnvironment;
  try {
    read = sinkEnvironment(env);
  } catch {
    throw new Error(`TETHER_SINK: must be one of ${SINK_KINDS.join(", ")} (got "${env.TETHER_SINK ?? ""}")`);
  }
  if (!read.url && !read.connection?.cloudId) throw new Error(`${read.urlVariable}: required when TETHER_SINK=${read.kind}${read.kind === "elasticsearch" ? " (or ELASTICSEARCH_CLOUD_ID)" : ""}`);
  const resolved = resolveConnection(read.kind, read.connection ?? {});
  readConnectionFiles(resolved);
  return { kind: read.kind, url: resolved.cloudId ? `cloud id ${resolved.cloudId.split(":")[0]}` : resolved.nodes.join(","), connection: describeConnection(resolved), environment: read };
}

/**
 * `sinkSetting` for a service's start: a bad setting is ONE JSON log line naming the variable
 * (`invalidEnv`, never its value) and exit 78, like every other invalid variable.
 *
 * @example
 * SINK: sinkSettingOrExit("drainer", process.env),
 */
export function sinkSettingOrExit(
  service: string,
  source: Readonly<Record<string, string | undefined>>,
  io: { write?: (line: string) => void; exit?: (code: number) => never } = {},
): SinkSetting {
  try {
    return sinkSetting(source);
  } catch (err) {
    const message = (err as Error).message;
    const variable = err instanceof ConnectionSettingError ? err.setting : message.slice(0, message.indexOf(":"));
    const problem = err instanceof ConnectionSettingError ? message.slice(err.setting.length + 2) : message.slice(message.indexOf(":") + 2);
    (io.write ?? ((line: string) => process.stdout.write(line)))(fatalLine(service, `invalid configuration: ${variable}`, { exitCode: EXIT_CODES.config, invalidEnv: { [variable]: problem } }));
    return (io.exit ?? process.exit)(EXIT_CODES.config);
  }
}
