import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { PreparingClient } from "./store/preparing-client.js";

// bigint (int8) and numeric come back as strings by default; ids stay strings, counts are
// converted where read.
export interface CreateDbOptions {
  connectionString: string;
  /** Pool size. Default 10. */
  max?: number;
  /** Application name shown in pg_stat_activity. Default "tether". */
  applicationName?: string;
  /**
   * Runs the writer's per-write statements as named prepared statements, parsed and planned once
   * per connection (see docs/postgres-connections.md). Needs a connection that keeps a session's
   * statements: Postgres itself, or PgBouncer 1.21+ with `max_prepared_statements` above 0 (not
   * PgBouncer in transaction mode before that). Default false: every statement is unnamed.
   */
  preparedStatements?: boolean;
}

/**
 * A Kysely instance over a pg Pool.
 * @example
 * const db = createDb({ connectionString: env.DATABASE_URL });
 */
export function createDb(opts: CreateDbOptions): Kysely<any> {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? "tether",
    connectionTimeoutMillis: 10_000,
    ...(opts.preparedStatements ? { Client: PreparingClient } : {}),
  });
  // A cut connection must not crash the process; the pool discards it and the next query reconnects.
  pool.on("error", () => undefined);
  // A checked-out client (mid-transaction) has no pool listener: a reset socket would be an
  // unhandled 'error' event and kill the process. With this one, the query in flight (or the
  // next) fails instead, the caller answers 5xx, and the pool discards the client on release.
  pool.on("connect", (client) => client.on("error", () => undefined));
  return new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
}
