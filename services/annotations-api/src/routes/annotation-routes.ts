import type { FastifyInstance } from "fastify";
import type { Kysely } from "kysely";
import { annotations, findLiveAnnotation, updatedNow, type AnnotationRow } from "@tether/annotations";
import { NotFoundError, type Writer } from "@tether/core";
import { createBodySchema, idParamsSchema, parseId, patchBodySchema, present, toColumns, type CreateBody, type PatchBody } from "../annotation-schemas.js";

export interface AnnotationRouteDeps {
  db: Kysely<any>;
  writer: Writer;
}

/**
 * CRUD on annotations. Every write goes through the tether writer: the row and its job commit
 * together, then one best-effort direct sync; nothing here talks to Elasticsearch.
 */
export async function annotationRoutes(app: FastifyInstance, { db, writer }: AnnotationRouteDeps): Promise<void> {
  app.post<{ Body: CreateBody }>("/api/annotations", { schema: { body: createBodySchema } }, async (request, reply) => {
    const { row } = await writer.createWithJob<AnnotationRow>(db, annotations, toColumns(request.body));
    return reply.status(201).header("location", `/api/annotations/${row!.id}`).send(present(row!));
  });

  app.get<{ Params: { id: string } }>("/api/annotations/:id", { schema: { params: idParamsSchema } }, async (request) => {
    const id = parseId(request.params.id);
    const row = await findLiveAnnotation(db, id);
    if (!row) throw new NotFoundError(`annotation ${id}`);
    return present(row);
  });

  app.patch<{ Params: { id: string }; Body: PatchBody }>(
    "/api/annotations/:id",
    { schema: { params: idParamsSchema, body: patchBodySchema } },
    async (request) => {
      const id = parseId(request.params.id);
      // `updated` moves in the same statement that bumps the version.
      const { row } = await writer.updateWithJob<AnnotationRow>(db, annotations, id, { ...toColumns(request.body), updated: updatedNow() });
      return present(row!);
    },
  );

  app.delete<{ Params: { id: string } }>("/api/annotations/:id", { schema: { params: idParamsSchema } }, async (request, reply) => {
    const id = parseId(request.params.id);
    await writer.deleteWithJob(db, annotations, id);
    return reply.status(204).send();
  });
}
