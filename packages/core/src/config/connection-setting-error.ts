import { TetherError } from "../errors.js";

/**
 * A connection setting of the sink that cannot be used: malformed, contradicting another
 * (an API key and a password), missing its pair (a client certificate without its key), or
 * naming a file that cannot be read. `setting` names the variable (`ELASTICSEARCH_API_KEY`) or
 * the factory option (`elasticsearch({ apiKey })`); the message never quotes a value.
 */
export class ConnectionSettingError extends TetherError {
  /** The environment variable or the factory option at fault. */
  readonly setting: string;
  /** Where the setting came from. */
  readonly source: "environment" | "config";
  constructor(setting: string, source: "environment" | "config", problem: string) {
    super("E_CONNECTION_SETTING", `${setting}: ${problem}`);
    this.setting = setting;
    this.source = source;
  }
}
