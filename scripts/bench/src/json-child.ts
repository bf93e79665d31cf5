import { spawn } from "node:child_process";

/**
 * Runs `script` in a child node process (same loader flags as this one) with `config` as its one
 * argument, and resolves with the JSON object on the last line it prints. `what` names the child
 * in errors.
 */
export function runJsonChild<T>(script: string, config: unknown, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, script, JSON.stringify(config)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line) return reject(new Error(`${what} exited with ${code}: ${err.slice(-2000)}`));
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`${what} printed no result: ${out.slice(-500)} ${err.slice(-1000)}`));
      }
    });
  });
}
