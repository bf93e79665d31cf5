import { PermanentSinkError } from "./errors.js";

/**
 * Terminology
 * - refusal: the engine answered a request with "you may not" (HTTP 403 for a privilege). Not a
 *   failure of the engine, nor of the input: the fix is the role the process runs under.
 * - actor: who was refused, as the operator knows it: the verb (`tether rebuild`) or the
 *   process (`the drainer`), and the role docs/connecting.md gives it (`tether_drainer`).
 *
 * Every refusal any process prints reads as the one sentence of `permissionDenied`, whatever
 * the engine's message left out (Elasticsearch names no index for `indices:admin/aliases/get`;
 * OpenSearch names no privilege at all): the sink fills the index from its request and the
 * privilege from the engine's list or its own table.
 */

/** Who was refused: the verb or process, and the role docs/connecting.md documents for it. */
export interface RefusalActor {
  /** `tether migrate`, `the drainer`, `the API`. */
  verb: string;
  /** `tether_drainer`, `tether_app`. */
  role: string;
}

/** What the engine refused, read from its answer and the request it answered. */
export interface SinkRefusal {
  /** Whether the missing privilege is granted per index or for the cluster. */
  scope: "index" | "cluster";
  /** The privilege to grant (the role's documented one when the engine accepts several). */
  privilege: string;
  /** The other privileges the engine said would allow it too. */
  alternatives: readonly string[];
  /** The concrete index (with its prefix) the request named; absent for a cluster privilege. */
  index?: string;
  /** The engine's action, e.g. `indices:admin/aliases/get`. */
  action: string;
  /** Who the engine says it refused (`user tether_app`, `API key id [k] of user u`). */
  principal?: string;
}

/**
 * The one sentence for a refused privilege:
 * `permission denied: <verb> needs the index privilege <p> on <index>; grant it to the role <role> (docs/connecting.md#roles)`,
 * then what the engine refused whom, for the engine's audit log.
 *
 * @example
 * permissionDenied({ scope: "index", privilege: "manage", alternatives: ["all"], index: "shop_annotations", action: "indices:admin/aliases/get" }, { verb: "tether rebuild", role: "tether_drainer" });
 * // permission denied: tether rebuild needs the index privilege manage on shop_annotations; grant it to the role tether_drainer (docs/connecting.md#roles); the engine refused indices:admin/aliases/get
 */
export function permissionDenied(r: SinkRefusal, actor?: RefusalActor): string {
  const who = actor?.verb ?? "this process";
  const on = r.scope === "index" && r.index ? ` on ${r.index}` : "";
  const role = actor ? `the role ${actor.role}` : "the role this process runs under";
  const also = r.alternatives.length > 0 ? ` (or ${r.alternatives.join(", ")})` : "";
  const refused = `the engine refused ${r.principal ? `${r.principal} ` : ""}${r.action}`;
  return `permission denied: ${who} needs the ${r.scope} privilege ${r.privilege}${also}${on}; grant it to ${role} (docs/connecting.md#roles); ${refused}`;
}

/** The engine refused a privilege: permanent until the role changes. Its message is `permissionDenied`'s. */
export class SinkPermissionError extends PermanentSinkError {
  constructor(
    readonly refusal: SinkRefusal,
    readonly actor: RefusalActor | undefined,
    options?: { cause?: unknown },
  ) {
    super(permissionDenied(refusal, actor), options, "E_SINK_FORBIDDEN");
  }

  /** The refusal in a chain of causes (a sink error wrapped by a pass or a verb), if any. */
  static in(err: unknown): SinkPermissionError | undefined {
    for (let e = err, i = 0; e && i < 8; e = (e as { cause?: unknown }).cause, i++) if (e instanceof SinkPermissionError) return e;
    return undefined;
  }
}
