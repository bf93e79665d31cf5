import { sql, type Kysely } from "kysely";

/** Every SQL statement on tether.console_session (the admin console's browser sessions) lives here. */

type Db = Kysely<any>;

export type ConsoleSessionRevocation = "logout" | "token_removed";

export interface NewConsoleSession {
  /** SHA-256 of the cookie. */
  idHash: Buffer;
  actor: string;
  role: string;
  tokenMac: Buffer;
  /** Idle lifetime. */
  ttlMs: number;
}

export interface ConsoleSessionRow {
  actor: string;
  role: string;
  tokenMac: Buffer;
  /** live: usable; expired: idle past its lifetime; revoked: logged out or its token removed. */
  state: "live" | "expired" | "revoked";
  revokedReason: ConsoleSessionRevocation | null;
}

/** How long revoked and expired rows stay (so a refusal can still say whose session it was). */
const KEEP_ENDED = "1 day";

/** Stores a new session, and prunes sessions that ended more than a day ago. */
export async function insertConsoleSession(db: Db, s: NewConsoleSession): Promise<void> {
  await sql`DELETE FROM tether.console_session WHERE least(revoked_at, expires_at) < now() - ${KEEP_ENDED}::interval`.execute(db);
  await sql`INSERT INTO tether.console_session (id_hash, actor, role, token_mac, expires_at)
            VALUES (${s.idHash}, ${s.actor}, ${s.role}, ${s.tokenMac}, now() + ${s.ttlMs} * interval '1 millisecond')`.execute(db);
}

/**
 * The session of `idHash` and its state by the database clock; a live one has its idle lifetime
 * renewed (at most every 10 s, so a busy page does not write on every request). One statement.
 */
export async function touchConsoleSession(db: Db, idHash: Buffer, ttlMs: number): Promise<ConsoleSessionRow | undefined> {
  const r = await sql<{ actor: string; role: string; token_mac: Buffer; revoked_reason: ConsoleSessionRevocation | null; expired: boolean }>`
    WITH s AS (
      SELECT id_hash, actor, role, token_mac, revoked_reason, expires_at <= now() AS expired, seen_at
      FROM tether.console_session WHERE id_hash = ${idHash}
    ), renewed AS (
      UPDATE tether.console_session c SET expires_at = now() + ${ttlMs} * interval '1 millisecond', seen_at = now()
      FROM s WHERE c.id_hash = s.id_hash AND s.revoked_reason IS NULL AND NOT s.expired AND s.seen_at < now() - interval '10 seconds'
      RETURNING c.id_hash
    )
    SELECT actor, role, token_mac, revoked_reason, expired FROM s`.execute(db);
  const row = r.rows[0];
  if (!row) return undefined;
  return {
    actor: row.actor,
    role: row.role,
    tokenMac: Buffer.from(row.token_mac),
    state: row.revoked_reason ? "revoked" : row.expired ? "expired" : "live",
    revokedReason: row.revoked_reason,
  };
}

/** Revokes the session (no-op when already revoked); true when this call revoked it. */
export async function revokeConsoleSession(db: Db, idHash: Buffer, reason: ConsoleSessionRevocation): Promise<boolean> {
  const r = await sql`UPDATE tether.console_session SET revoked_at = now(), revoked_reason = ${reason}
                      WHERE id_hash = ${idHash} AND revoked_at IS NULL`.execute(db);
  return Number(r.numAffectedRows ?? 0) > 0;
}
