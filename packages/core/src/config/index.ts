export { ConfigError } from "./config-error.js";
export { checkConfigSchema, type CheckConfigSchemaOptions, type PendingAdoption } from "./check-config-schema.js";
export { DEFAULT_CONFIG_FILES, loadConfig, type LoadConfigOptions } from "./load-config.js";
export { defineConfig, type LoadedConfig, type SinkEnvironment, type SinkFactory, type TetherConfig } from "./tether-config.js";
export { TetherOptionsSchema, type TetherOptions } from "./tether-options.js";
export { validateConfig } from "./validate-config.js";
export { sinkFromConfig, writerFromConfig } from "./from-config.js";
export { SINK_KINDS, SINK_URL_VARIABLES, sinkEnvironment, type ProcessSinkEnvironment, type SinkKind } from "./sink-environment.js";
