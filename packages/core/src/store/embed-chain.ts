import { sql, type RawBuilder } from "kysely";
import type { Collection } from "../collection.js";
import type { AnyEmbeddedTable as EmbeddedTable } from "../embedded-table.js";

/**
 * The SQL shapes of an embed's chain, from the document's row (alias `t`) out to the embedded
 * table: which documents a link value reaches, and the link value each document reaches. Every
 * statement on embeds (embed-store.ts) is built from these, so the writer, the capture trigger's
 * fan-out, the drainer's expansion and verify agree on what "reached" means.
 *
 * Aliases: `t` is the document's row; `j1` … `jm` the rows of the tables the embed is reached
 * through, `j1` next to the document. The embedded table itself is never read: a change is keyed
 * by its link value, which its child row holds.
 */

const ref = (alias: string, column: string) => sql.ref(`${alias}.${column}`);

/** The tables between the document and `embed`: [C1 … Cm] (C1 next to the document). */
export function chainTables(collection: Collection<any>, embed: EmbeddedTable): EmbeddedTable[] {
  return embed.chain.slice(0, -1).map((name) => collection.embeds[name]!);
}

/** The alias of the row holding `embed`'s child column: `t`, or `jm`. */
function childAlias(collection: Collection<any>, embed: EmbeddedTable): string {
  const m = chainTables(collection, embed).length;
  return m === 0 ? "t" : `j${m}`;
}

/**
 * A condition on the document row `t`: it is reached by `link`, a link value of `embed` (nested
 * semi-joins through the chain, so each document appears once).
 */
export function reachedBy(collection: Collection<any>, embed: EmbeddedTable, link: unknown): RawBuilder<boolean> {
  const chain = chainTables(collection, embed);
  let cond: RawBuilder<boolean> = sql<boolean>`${ref(childAlias(collection, embed), embed.childColumn)} = ${link}`;
  for (let i = chain.length; i >= 1; i--) {
    const c = chain[i - 1]!;
    const parent = i === 1 ? "t" : `j${i - 1}`;
    cond = sql<boolean>`${ref(parent, c.childColumn)} IN (SELECT ${ref(`j${i}`, c.linkColumn)} FROM ${sql.table(c.table)} AS ${sql.raw(`j${i}`)} WHERE ${cond})`;
  }
  return cond;
}

/**
 * The joins from the document row `t` out to `embed`'s child row, and the expression of the
 * link value that row holds: `FROM <doc> t <joins>` then `link` is the value `t` reaches.
 */
export function reachingJoins(collection: Collection<any>, embed: EmbeddedTable): { joins: RawBuilder<unknown>; link: RawBuilder<unknown> } {
  const chain = chainTables(collection, embed);
  const joins = chain.map((c, k) => {
    const i = k + 1;
    const parent = i === 1 ? "t" : `j${i - 1}`;
    return sql`JOIN ${sql.table(c.table)} AS ${sql.raw(`j${i}`)} ON ${ref(`j${i}`, c.linkColumn)} = ${ref(parent, c.childColumn)}`;
  });
  return { joins: sql.join(joins, sql` `), link: sql`${ref(childAlias(collection, embed), embed.childColumn)}` };
}

/**
 * A condition on the document row `t`: one of its link values has a change whose fan-out has not
 * finished (`tether.embed_change`, version > expanded). False for a collection without fan-out embeds.
 */
export function pendingChange(collection: Collection<any>): RawBuilder<boolean> {
  const fanouts = Object.values(collection.embeds).filter((e) => !e.direct);
  if (fanouts.length === 0) return sql<boolean>`false`;
  const conds = fanouts.map((e) => {
    const chain = chainTables(collection, e);
    const link = ref(childAlias(collection, e), e.childColumn);
    const pending = sql`ec.embed = ${e.path} AND ec.link = (${link})::text AND ec.version > ec.expanded`;
    if (chain.length === 0) return sql<boolean>`EXISTS (SELECT 1 FROM tether.embed_change ec WHERE ${pending})`;
    // j1 is tied to t in the WHERE of the sub-select; the other chain tables hang off j1.
    const c1 = chain[0]!;
    const rest = chain.slice(1).map((c, k) => {
      const i = k + 2;
      return sql`JOIN ${sql.table(c.table)} AS ${sql.raw(`j${i}`)} ON ${ref(`j${i}`, c.linkColumn)} = ${ref(`j${i - 1}`, c.childColumn)}`;
    });
    return sql<boolean>`EXISTS (SELECT 1 FROM ${sql.table(c1.table)} AS j1 ${sql.join(rest, sql` `)}
      JOIN tether.embed_change ec ON ${pending} WHERE ${ref("j1", c1.linkColumn)} = ${ref("t", c1.childColumn)})`;
  });
  return sql<boolean>`(${sql.join(conds, sql` OR `)})`;
}

/** A condition on `t`: the document is live (not soft-deleted). */
export function liveDocument(collection: Collection<any>): RawBuilder<boolean> {
  const d = collection.deletedColumn;
  return d ? sql<boolean>`(${ref("t", d)} IS NULL OR ${ref("t", d)}::text = 'false')` : sql<boolean>`true`;
}
