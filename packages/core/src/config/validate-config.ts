import { Value, ValueErrorType } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import { ConfigError } from "./config-error.js";
import type { TetherConfig } from "./tether-config.js";
import { TetherOptionsSchema } from "./tether-options.js";

const TOP_LEVEL = new Set(["collections", "sink", "migrations", "options"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

// A JSON pointer from TypeBox (`/drainer/batchSize`) as the dotted field operators read.
const dotted = (pointer: string) => pointer.split("/").filter(Boolean).join(".");

// The keys the options schema allows beside the unknown one at `pointer`.
function allowedKeys(pointer: string): string[] {
  let schema: TSchema | undefined = TetherOptionsSchema;
  for (const key of pointer.split("/").filter(Boolean).slice(0, -1)) schema = (schema?.properties as Record<string, TSchema> | undefined)?.[key];
  return Object.keys((schema?.properties as object | undefined) ?? {});
}

function checkCollections(file: string, value: unknown): void {
  if (!Array.isArray(value) || value.length === 0) {
    throw new ConfigError(file, "collections", "must be a non-empty array of collections (see defineCollection)");
  }
  const names = new Map<string, number>();
  const jobNames = new Map<string, number>();
  value.forEach((c: unknown, i) => {
    const field = `collections[${i}]`;
    // Collections come from defineCollection, which has validated their own fields already.
    if (!isObject(c) || typeof c.name !== "string" || typeof c.table !== "string" || typeof c.toDocument !== "function") {
      throw new ConfigError(file, field, "is not a collection: build it with defineCollection()");
    }
    const seen = names.get(c.name);
    if (seen !== undefined) throw new ConfigError(file, `${field}.name`, `"${c.name}" is also the name of collections[${seen}]`);
    names.set(c.name, i);
    const jobName = String(c.jobName);
    const seenJob = jobNames.get(jobName);
    if (seenJob !== undefined) throw new ConfigError(file, `${field}.jobName`, `"${jobName}" is also the job name of collections[${seenJob}]`);
    jobNames.set(jobName, i);
  });
}

function checkMigrations(file: string, value: unknown): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new ConfigError(file, "migrations", "must be an array of migration sets ({ namespace, migrations })");
  value.forEach((m: unknown, i) => {
    if (!isObject(m) || typeof m.namespace !== "string" || !Array.isArray(m.migrations)) {
      throw new ConfigError(file, `migrations[${i}]`, "must be a migration set: { namespace: string, migrations: Migration[] }");
    }
  });
}

/**
 * Checks the shape of a loaded config module's export: known top-level keys only, a non-empty
 * list of collections with unique names and job names, a sink factory, migration sets, and
 * options against `TetherOptionsSchema` (unknown options are errors). Throws `ConfigError`.
 */
export function validateConfig(file: string, value: unknown): TetherConfig {
  if (!isObject(value)) throw new ConfigError(file, "default export", "must be the object of defineConfig({ collections, sink })");
  for (const key of Object.keys(value)) {
    if (!TOP_LEVEL.has(key)) throw new ConfigError(file, key, `unknown option; expected one of ${[...TOP_LEVEL].join(", ")}`);
  }
  checkCollections(file, value.collections);
  if (typeof value.sink !== "function") {
    throw new ConfigError(file, "sink", "must be a sink factory, e.g. elasticsearch() from @tether/elasticsearch");
  }
  checkMigrations(file, value.migrations);
  if (value.options !== undefined) {
    const first = Value.Errors(TetherOptionsSchema, value.options).First();
    if (first) {
      const field = ["options", dotted(first.path)].filter(Boolean).join(".");
      if (first.type === ValueErrorType.ObjectAdditionalProperties) {
        throw new ConfigError(file, field, `unknown option; expected one of ${allowedKeys(first.path).join(", ")}`);
      }
      throw new ConfigError(file, field, first.message.toLowerCase());
    }
  }
  return value as unknown as TetherConfig;
}
