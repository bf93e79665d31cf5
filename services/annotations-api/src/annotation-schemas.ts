import { annotations, type AnnotationRow } from "@tether/annotations";
import { canonicalEntityId, ValidationError } from "@tether/core/internal";

// NUL and lone surrogates are refused in every string by the error contract's body parser
// (service-kit), before any schema runs; the schemas bound lengths.
const text = (minLength: number, maxLength: number) => ({ type: "string", minLength, maxLength }) as const;

export const LIMITS = { user: 256, displayName: 256, group: 256, uri: 2048, text: 10_000, tags: 50, tag: 128 } as const;

const tags = { type: "array", maxItems: LIMITS.tags, items: text(1, LIMITS.tag) } as const;

export const createBodySchema = {
  type: "object",
  additionalProperties: false,
  required: ["user", "uri"],
  properties: {
    user: text(1, LIMITS.user),
    group: text(1, LIMITS.group),
    uri: text(1, LIMITS.uri),
    text: text(0, LIMITS.text),
    tags,
  },
} as const;

export const patchBodySchema = {
  type: "object",
  additionalProperties: false,
  minProperties: 1,
  properties: {
    group: text(1, LIMITS.group),
    uri: text(1, LIMITS.uri),
    text: text(0, LIMITS.text),
    tags,
  },
} as const;

export const idParamsSchema = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", maxLength: 40 } },
} as const;

export interface CreateBody {
  user: string;
  group?: string;
  uri: string;
  text?: string;
  tags?: string[];
}

export type PatchBody = Partial<Pick<CreateBody, "group" | "uri" | "text" | "tags">>;

/** What the API answers for an annotation. Ids are strings (bigint). */
export interface AnnotationView {
  id: string;
  version: number;
  user: string;
  group: string;
  uri: string;
  text: string;
  tags: string[];
  created: string;
  updated: string;
}

export function present(row: AnnotationRow): AnnotationView {
  return {
    id: String(row.id),
    version: Number(row.version),
    user: row.userid,
    group: row.groupid,
    uri: row.target_uri,
    text: row.text,
    tags: row.tags,
    created: new Date(row.created).toISOString(),
    updated: new Date(row.updated).toISOString(),
  };
}

/** An annotation id from the URL, by the collection's id rule (the one re-index and the drainer use), else a 400 naming `id`. */
export function parseId(raw: string): string {
  const c = canonicalEntityId(annotations.idType, raw);
  if ("error" in c) throw new ValidationError("id", c.error);
  return c.id;
}

/** Domain columns of a create or patch body. */
export function toColumns(body: PatchBody & { user?: string }): Record<string, unknown> {
  const cols: Record<string, unknown> = {};
  if (body.user !== undefined) cols.userid = body.user;
  if (body.group !== undefined) cols.groupid = body.group;
  if (body.uri !== undefined) cols.target_uri = body.uri;
  if (body.text !== undefined) cols.text = body.text;
  if (body.tags !== undefined) cols.tags = body.tags;
  return cols;
}
