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
