import { sql, type Kysely } from "kysely";

type Db = Kysely<any>;

export type RebuildPhase = "loading" | "catching_up" | "swapped";

/** One collection's rebuild, as `tether.index_rebuild` keeps it. */
export interface RebuildState {
  collection: string;
  /** The name readers and writers use (the collection's index). */
  alias: string;
  /** The index being built, then serving the alias. */
  target: string;
  /** The index the alias served before the swap, kept for a rollback (null: there was none). */
  previous: string | null;
  phase: RebuildPhase;
  /** The last id loaded; a resumed load starts after it. */
  loadedThrough: string | null;
  rowsLoaded: number;
  rowsTotal: number;
  startedAt: Date;
  updatedAt: Date;
  swappedAt: Date | null;
}

interface StateRow {
  collection: string;
  alias: string;
  target: string;
  previous: string | null;
  phase: RebuildPhase;
  loaded_through: string | null;
  rows_loaded: string;
  rows_total: string;
  started_at: Date;
  updated_at: Date;
  swapped_at: Date | null;
}

const toState = (r: StateRow): RebuildState => ({
  collection: r.collection,
  alias: r.alias,
  target: r.target,
  previous: r.previous,
  phase: r.phase,
  loadedThrough: r.loaded_through,
  rowsLoaded: Number(r.rows_loaded),
  rowsTotal: Number(r.rows_total),
  startedAt: r.started_at,
  updatedAt: r.updated_at,
  swappedAt: r.swapped_at,
});

export async function readRebuild(db: Db, collection: string): Promise<RebuildState | undefined> {
  const r = await sql<StateRow>`SELECT * FROM tether.index_rebuild WHERE collection = ${collection}`.execute(db);
  return r.rows[0] ? toState(r.rows[0]) : undefined;
}

export async function insertRebuild(db: Db, s: { collection: string; alias: string; target: string; previous: string | null; rowsTotal: number }): Promise<RebuildState> {
  const r = await sql<StateRow>`
    INSERT INTO tether.index_rebuild (collection, alias, target, previous, phase, rows_total)
    VALUES (${s.collection}, ${s.alias}, ${s.target}, ${s.previous}, 'loading', ${s.rowsTotal}) RETURNING *`.execute(db);
  return toState(r.rows[0]!);
}

/** Records a loaded page: a resumed load starts after `loadedThrough`. */
export async function recordLoaded(db: Db, collection: string, loadedThrough: string, rows: number): Promise<void> {
  await sql`UPDATE tether.index_rebuild SET loaded_through = ${loadedThrough}, rows_loaded = rows_loaded + ${rows}, updated_at = now()
    WHERE collection = ${collection}`.execute(db);
}

export async function setRebuildPhase(db: Db, collection: string, phase: RebuildPhase, previous?: string | null): Promise<void> {
  await sql`UPDATE tether.index_rebuild SET phase = ${phase}, updated_at = now(),
      swapped_at = CASE WHEN ${phase} = 'swapped' THEN now() ELSE swapped_at END,
      previous = CASE WHEN ${previous !== undefined} THEN ${previous ?? null} ELSE previous END
    WHERE collection = ${collection}`.execute(db);
}

export async function deleteRebuild(db: Db, collection: string): Promise<void> {
  await sql`DELETE FROM tether.index_rebuild WHERE collection = ${collection}`.execute(db);
}

/**
 * Runs `fn` holding an advisory lock on the collection's rebuild: a second rebuild of the same
 * collection is refused, and a process that dies releases the lock with its connection.
 * Resolves `undefined` without running `fn` when the lock is taken. The lock is
 * transaction-scoped, in a transaction held open (idle, on a connection of its own) while `fn`
 * works on others: through a transaction-mode pooler (PgBouncer) that pins one server
 * connection for the rebuild, where a session lock would stay behind on whichever server
 * connection took it. The idle transaction holds no snapshot, so it does not hold back vacuum.
 */
export async function withRebuildLock<T>(db: Db, collection: string, fn: () => Promise<T>): Promise<{ value: T } | undefined> {
  let done: { value: T } | undefined;
  try {
    return await db.transaction().execute(async (trx) => {
      // Idle for as long as the rebuild runs: a server-wide idle-in-transaction limit must not end it.
      await sql`SELECT set_config('idle_in_transaction_session_timeout', '0', true)`.execute(trx);
      const key = `tether.index_rebuild:${collection}`;
      const got = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(hashtext(${key})) AS ok`.execute(trx);
      if (!got.rows[0]?.ok) return undefined;
      done = { value: await fn() };
      return done;
    });
  } catch (err) {
    // The work is done and only the lock's COMMIT failed (its connection was lost): the lock went with it.
    if (done) return done;
    throw err;
  }
}
