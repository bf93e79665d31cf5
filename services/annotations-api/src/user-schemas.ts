import { Type, type Static } from "typebox";
import type { AnnotationUserRow } from "@tether/annotations";
import { LIMITS } from "./annotation-schemas.js";

// NUL and lone surrogates are refused in every string (body, query, path) by the error contract,
// before any schema runs; the schemas bound lengths and refuse unknown fields.

/** A user id as annotations carry it (`annotation.userid`): any text of 1-256 characters. */
export const UserParams = Type.Object({ userid: Type.String({ minLength: 1, maxLength: LIMITS.user }) });

const DisplayName = Type.Union([Type.String({ minLength: 1, maxLength: LIMITS.displayName }), Type.Null()]);

/** PUT /api/users/:userid: the whole user; what is left out takes its default (no display name, not hidden). */
export const PutUserBody = Type.Object({ displayName: Type.Optional(DisplayName), hidden: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

/** PATCH /api/users/:userid: a rename, a hide or unhide, or both. */
export const PatchUserBody = Type.Object({ displayName: Type.Optional(DisplayName), hidden: Type.Optional(Type.Boolean()) }, { additionalProperties: false, minProperties: 1 });

export type PutUser = Static<typeof PutUserBody>;
export type PatchUser = Static<typeof PatchUserBody>;

/** What the API answers for a user. */
export interface UserView {
  user: string;
  displayName: string | null;
  hidden: boolean;
}

export function presentUser(row: AnnotationUserRow): UserView {
  return { user: row.userid, displayName: row.display_name, hidden: row.hidden };
}

/** The annotation_user columns of a body. */
export function userColumns(body: PatchUser): { display_name?: string | null; hidden?: boolean } {
  return { ...(body.displayName !== undefined ? { display_name: body.displayName } : {}), ...(body.hidden !== undefined ? { hidden: body.hidden } : {}) };
}
