import { createHash } from "node:crypto";
import pg from "pg";

/**
 * The comment that opens a statement the writer runs on every write (a row and its job, with
 * its document's row when the collection declares a `loadQuery`): a pool made by
 * `createDb({ preparedStatements: true })` runs such a statement as a named prepared statement,
 * so each connection parses and plans it once instead of on every write (for a write whose
 * document reads another table, most of its Postgres CPU). Elsewhere the comment is only a comment.
 */
export const PREPARE_MARK = "/* tether:prepared */ ";

/** Named statements one connection keeps at most (a writer has a few shapes per collection: insert columns, patch columns). */
const MAX_NAMED_PER_CONNECTION = 200;

/**
 * A pg Client that names the statements marked with PREPARE_MARK, by a hash of their text (the
 * same text, the same name, on every connection). Past MAX_NAMED_PER_CONNECTION distinct
 * texts on one connection, further ones run unnamed: a caller with unbounded shapes does not
 * grow the server's memory without bound.
 */
export class PreparingClient extends pg.Client {
  private named = new Set<string>();

  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === "string" && config.startsWith(PREPARE_MARK) && callback === undefined && typeof values !== "function") {
      const name = `tether_${createHash("sha1").update(config).digest("hex").slice(0, 24)}`;
      if (this.named.has(name) || this.named.size < MAX_NAMED_PER_CONNECTION) {
        this.named.add(name);
        return super.query({ name, text: config, values: values ?? [] });
      }
    }
    return super.query(config, values, callback);
  }
}
