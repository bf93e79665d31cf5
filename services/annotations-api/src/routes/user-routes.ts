import type { FastifyInstance } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Kysely } from "kysely";
import { annotations, findAnnotationUser, type AnnotationUserRow, type AnnotationUserUpdate } from "@tether/annotations";
import { NotFoundError, type EmbedWriteResult, type Writer } from "@tether/core";
import { pgErrorCode, PgErrorCode } from "@tether/core/internal";
import { PatchUserBody, presentUser, PutUserBody, UserParams, userColumns } from "../user-schemas.js";

export interface UserRouteDeps {
  db: Kysely<any>;
  writer: Writer;
}

const author = annotations.embeds.author;

/** A missing user as the API names it (the writer's error names the table). */
async function orNotFound<T>(userid: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof NotFoundError) throw new NotFoundError(`user ${userid}`);
    throw err;
  }
}

/**
 * Creates or replaces a user. An update first (the common case: the user exists); when there is
 * none, an insert; when another request inserted it meanwhile (a unique violation), the update
 * again. Each attempt is one transaction of the writer with its fan-out job.
 */
async function putUser(db: Kysely<any>, writer: Writer, userid: string, values: Required<AnnotationUserUpdate>): Promise<{ created: boolean; result: EmbedWriteResult<AnnotationUserRow> }> {
  try {
    return { created: false, result: await writer.updateWithJob(db, author, userid, values) };
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
  }
  try {
    return { created: true, result: await writer.createWithJob(db, author, { userid, ...values }) };
  } catch (err) {
    if (pgErrorCode(err) !== PgErrorCode.uniqueViolation) throw err;
  }
  return { created: false, result: await writer.updateWithJob(db, author, userid, values) };
}

/**
 * The annotations' authors (annotation_user): a display name and the hidden flag every
 * annotation document embeds. Every write goes through the writer's verbs on the collection's
 * embed: the row and ONE fan-out job commit together, whatever the number of annotations the
 * user has; the drainer re-syncs them, a chunk at a time. Answers `fanouts`: the fan-out jobs
 * enqueued (1, or 0 when the write changed nothing a document reads).
 */
export async function userRoutes(parent: FastifyInstance, { db, writer }: UserRouteDeps): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get("/api/users/:userid", { schema: { params: UserParams } }, async (request) => {
    const row = await findAnnotationUser(db, request.params.userid);
    if (!row) throw new NotFoundError(`user ${request.params.userid}`);
    return presentUser(row);
  });

  app.put("/api/users/:userid", { schema: { params: UserParams, body: PutUserBody } }, async (request, reply) => {
    const { userid } = request.params;
    const { created, result } = await putUser(db, writer, userid, { display_name: request.body.displayName ?? null, hidden: request.body.hidden ?? false });
    if (created) reply.status(201).header("location", `/api/users/${encodeURIComponent(userid)}`);
    return { ...presentUser(result.row!), fanouts: result.fanouts };
  });

  app.patch("/api/users/:userid", { schema: { params: UserParams, body: PatchUserBody } }, async (request) => {
    const { userid } = request.params;
    const result = await orNotFound(userid, () => writer.updateWithJob(db, author, userid, userColumns(request.body)));
    return { ...presentUser(result.row!), fanouts: result.fanouts };
  });

  app.delete("/api/users/:userid", { schema: { params: UserParams } }, async (request, reply) => {
    const { userid } = request.params;
    await orNotFound(userid, () => writer.deleteWithJob(db, author, userid));
    return reply.status(204).send();
  });
}
