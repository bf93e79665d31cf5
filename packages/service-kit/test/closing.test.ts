import Fastify from "fastify";
import { expect, it } from "vitest";
import { errorContract, errorContractServerOptions } from "../src/index.js";

it("answers a request that reaches the app while it closes with 503 service_unavailable in the error contract", async () => {
  const app = Fastify({ ...errorContractServerOptions() });
  await app.register(errorContract);
  app.get("/fast", async () => ({ ok: true }));
  let during: { status: number; body: unknown; connection: string | null } | undefined;
  // Runs after the contract's own preClose hook and before the server stops listening: a request
  // arriving now is one a load balancer sent before it learnt of the shutdown.
  app.addHook("preClose", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/fast`);
    during = { status: res.status, body: await res.json(), connection: res.headers.get("connection") };
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const port = (app.server.address() as { port: number }).port;
  expect((await fetch(`http://127.0.0.1:${port}/fast`)).status).toBe(200);
  await app.close();
  expect(during).toEqual({ status: 503, body: { error: "service_unavailable", message: "the service is shutting down; retry on another instance" }, connection: "close" });
});
