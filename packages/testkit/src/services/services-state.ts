import { mkdirSync, readFileSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { cacheDir } from "./repo-paths.js";

/** How a service was obtained. */
export type ServiceVia = "env" | "testcontainers" | "local" | "maven";

export interface ServiceRecord {
  url: string;
  via: ServiceVia;
  /** Free text: version, data folder, container id. */
  detail: string;
  /** Set when this project started it (so `down` may stop it, with `signal`, default SIGTERM). */
  startedByUs?: { pid?: number; containerId?: string; signal?: NodeJS.Signals };
}

export interface ServicesState {
  postgres?: ServiceRecord;
  elasticsearch?: ServiceRecord;
  opensearch?: ServiceRecord;
  /** The secured Elasticsearch of the connection tests (HTTPS, users and roles). */
  "secure-elasticsearch"?: ServiceRecord;
  /** Other majors, keyed `<service>@<major>` (`elasticsearch@9`, `opensearch@3`, `postgres@17`). */
  [versioned: `${string}@${string}`]: ServiceRecord | undefined;
}

const file = () => join(cacheDir(), "services.json");

export function readServicesState(): ServicesState {
  if (!existsSync(file())) return {};
  return JSON.parse(readFileSync(file(), "utf8")) as ServicesState;
}

export function writeServicesState(state: ServicesState): void {
  mkdirSync(cacheDir(), { recursive: true });
  writeFileSync(file(), JSON.stringify(state, null, 2) + "\n");
}

export function clearServicesState(): void {
  rmSync(file(), { force: true });
}
