import type { AddressInfo, Server } from "node:net";

/** Starts `server` listening on `host:port` (0 = any free port); resolves with the port, rejects on a bind error. */
export function listenOn(server: Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Listens again on a port this server just released, retrying while the OS still holds it. */
export async function relistenOn(server: Server, port: number, host: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await listenOn(server, port, host);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
