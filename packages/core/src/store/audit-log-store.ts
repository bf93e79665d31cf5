import { sql, type Kysely } from "kysely";

/** Every SQL statement on tether.audit_log lives here. */

export interface AuditEntry {
  actor: string;
  role: string;
  action: string;
  params: Record<string, unknown>;
  status: number;
  result: unknown;
}

/**
 * How an audited request ended, from its HTTP status: `ok` below 400, `refused` for 401 and 403
 * (no or a wrong credential, an expired or revoked session, a missing CSRF token, a viewer's
 * action), `failed` for any other error (a bad parameter, an unknown lane, a server error).
 */
export type AuditOutcome = "ok" | "refused" | "failed";
export const AUDIT_OUTCOMES: readonly AuditOutcome[] = ["ok", "refused", "failed"];

export interface AuditRow extends AuditEntry {
  id: string;
  at: string;
  outcome: AuditOutcome;
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  outcome?: AuditOutcome;
  /** Only rows with an id below this (the previous page's cursor). */
  before?: string;
  limit: number;
}

export async function insertAudit(db: Kysely<any>, e: AuditEntry): Promise<string> {
  const r = await sql<{ id: string }>`
    INSERT INTO tether.audit_log (actor, role, action, params, status, result)
    VALUES (${e.actor}, ${e.role}, ${e.action}, ${JSON.stringify(e.params)}::jsonb, ${e.status}, ${JSON.stringify(e.result ?? null)}::jsonb)
    RETURNING id`.execute(db);
  return String(r.rows[0]!.id);
}

/** Newest first, keyset-paginated by id. */
export async function listAudit(db: Kysely<any>, f: AuditFilter): Promise<AuditRow[]> {
  const r = await sql<{ id: string; at: Date; actor: string; role: string; action: string; params: Record<string, unknown>; status: number; result: unknown; outcome: AuditOutcome }>`
    SELECT * FROM (
      SELECT id, at, actor, role, action, params, status, result,
             CASE WHEN status < 400 THEN 'ok' WHEN status IN (401, 403) THEN 'refused' ELSE 'failed' END AS outcome
      FROM tether.audit_log
    ) a
    WHERE (${f.actor ?? null}::text IS NULL OR actor = ${f.actor ?? null})
      AND (${f.action ?? null}::text IS NULL OR action = ${f.action ?? null})
      AND (${f.outcome ?? null}::text IS NULL OR outcome = ${f.outcome ?? null})
      AND (${f.before ?? null}::bigint IS NULL OR id < ${f.before ?? null}::bigint)
    ORDER BY id DESC LIMIT ${f.limit}`.execute(db);
  return r.rows.map((x) => ({ ...x, id: String(x.id), at: x.at.toISOString() }));
}
