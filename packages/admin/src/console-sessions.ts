import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { Kysely } from "kysely";
import { insertConsoleSession, revokeConsoleSession, touchConsoleSession, type ConsoleSessionRevocation } from "@tether/core/internal";
import type { AdminRole } from "./admin-options.js";

/** A configured token as the plugin keeps it: its name, role and SHA-256 (never the token). */
export interface TokenDigest {
  name: string;
  role: AdminRole;
  digest: Buffer;
}

/** A live session: who, and the CSRF token its mutating requests must echo. */
export interface AdminSession {
  name: string;
  role: AdminRole;
  csrfToken: string;
}

/** What a cookie turned out to be. */
export type SessionLookup =
  | { state: "live"; session: AdminSession }
  /** A session that was, but is no more: who it was, and why it is refused. */
  | { state: "expired" | "revoked"; name: string; role: string; reason: "expired" | ConsoleSessionRevocation }
  | { state: "unknown" };

const sha256 = (s: string | Buffer) => createHash("sha256").update(s).digest();
const hmac = (key: string, data: string | Buffer) => createHmac("sha256", key).update(data).digest();

/** The CSRF token of a session: derived from its cookie, so any replica knows it and no table holds it. */
const csrfOf = (cookie: string) => hmac(cookie, "tether-admin-csrf").toString("base64url");

/**
 * The console's browser sessions, kept in Postgres (tether.console_session) so every API replica
 * serves every session. The cookie is an opaque random id; the table holds its hash. Each
 * request checks that the token the session logged in with is still configured: removing (or
 * rotating) a token revokes its sessions, on whichever replica sees them next.
 */
export class ConsoleSessions {
  constructor(
    private readonly db: Kysely<any>,
    private readonly tokens: readonly TokenDigest[],
    private readonly ttlMs: number,
  ) {}

  /** A new session for the owner of `token`; answers the cookie value and the session. */
  async create(token: TokenDigest): Promise<{ cookie: string; session: AdminSession }> {
    const cookie = randomBytes(32).toString("base64url");
    await insertConsoleSession(this.db, { idHash: sha256(cookie), actor: token.name, role: token.role, tokenMac: hmac(cookie, token.digest), ttlMs: this.ttlMs });
    return { cookie, session: { name: token.name, role: token.role, csrfToken: csrfOf(cookie) } };
  }

  /** The session of a cookie, its idle lifetime renewed when live. */
  async lookup(cookie: string | undefined): Promise<SessionLookup> {
    // Our cookies are 43 characters of base64url: anything else was never issued.
    if (!cookie || !/^[A-Za-z0-9_-]{43}$/.test(cookie)) return { state: "unknown" };
    const idHash = sha256(cookie);
    const row = await touchConsoleSession(this.db, idHash, this.ttlMs);
    if (!row) return { state: "unknown" };
    if (row.state === "revoked") return { state: "revoked", name: row.actor, role: row.role, reason: row.revokedReason ?? "logout" };
    if (row.state === "expired") return { state: "expired", name: row.actor, role: row.role, reason: "expired" };
    const token = this.tokens.find((t) => t.name === row.actor && timingSafeEqual(hmac(cookie, t.digest), row.tokenMac));
    if (!token) {
      await revokeConsoleSession(this.db, idHash, "token_removed");
      return { state: "revoked", name: row.actor, role: row.role, reason: "token_removed" };
    }
    return { state: "live", session: { name: token.name, role: token.role, csrfToken: csrfOf(cookie) } };
  }

  /** Logs a session out for good, on every replica. */
  async revoke(cookie: string): Promise<void> {
    await revokeConsoleSession(this.db, sha256(cookie), "logout");
  }
}
