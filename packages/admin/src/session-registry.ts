import { randomBytes } from "node:crypto";
import type { AdminRole } from "./admin-options.js";

export interface AdminSession {
  name: string;
  role: AdminRole;
  csrfToken: string;
  expiresAt: number;
}

/**
 * Browser sessions of this process: an opaque random id (the HttpOnly cookie) → who logged in
 * and the CSRF token every mutating request must echo. Kept in memory on purpose: a restart
 * logs everyone out, and no session id or token is ever written to a table. Behind several API
 * replicas, pin the console to one (or log in again).
 */
export class SessionRegistry {
  private readonly sessions = new Map<string, AdminSession>();

  constructor(private readonly ttlMs: number) {}

  create(name: string, role: AdminRole): { id: string; session: AdminSession } {
    this.sweep();
    const id = randomBytes(32).toString("base64url");
    const session = { name, role, csrfToken: randomBytes(32).toString("base64url"), expiresAt: Date.now() + this.ttlMs };
    this.sessions.set(id, session);
    return { id, session };
  }

  /** The live session of `id`, its idle lifetime renewed; undefined when unknown or expired. */
  get(id: string | undefined): AdminSession | undefined {
    if (!id) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (s.expiresAt <= Date.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    s.expiresAt = Date.now() + this.ttlMs;
    return s;
  }

  delete(id: string | undefined): void {
    if (id) this.sessions.delete(id);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(id);
  }
}
