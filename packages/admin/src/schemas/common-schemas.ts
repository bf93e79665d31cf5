import { Type, type Static, type TSchema } from "typebox";

export const ErrorBody = Type.Object(
  { error: Type.String(), message: Type.String(), field: Type.Optional(Type.String()) },
  { $id: "AdminError", description: "Every error answer: a code, a sentence, and the offending field on 400s." },
);

/** Error answers every authenticated route may give. */
export const authErrors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 503: ErrorBody };

export const Limit = Type.Integer({ minimum: 1, maximum: 500, default: 50, description: "Rows per page." });

/** A page of a keyset-paginated list: pass `nextCursor` back as the cursor to get the next one. */
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()], { description: "null on the last page" }) });

export const Cursor = Type.String({ pattern: "^[1-9][0-9]{0,18}$", description: "nextCursor of the previous page" });
export const JobName = Type.String({ minLength: 1, maxLength: 200 });
export const Tag = Type.String({ minLength: 1, maxLength: 200 });
// The id rule (canonicalEntityId) judges the content; 512 characters bound what can be 512 bytes of UTF-8.
export const EntityId = Type.String({ minLength: 1, maxLength: 512 });
export const Id = Type.String({ pattern: "^[1-9][0-9]{0,18}$" });
export const Ids = Type.Array(Id, { minItems: 1, maxItems: 10_000, description: "Row ids." });
export const Timestamp = Type.String({ description: "ISO-8601" });
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
export const AnyObject = Type.Object({}, { additionalProperties: true });

export type Paged<T> = { items: T[]; nextCursor: string | null };
export type ErrorBodyType = Static<typeof ErrorBody>;

/** A page from `limit + 1` rows: the extra row only says whether there is a next page. */
export function page<T extends { id: string }>(rows: T[], limit: number): Paged<T> {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? items[items.length - 1]!.id : null };
}
