import { existsSync } from "node:fs";
import { runCommand } from "./run-command.js";

/** True when a Docker engine answers (not merely a docker client on PATH). */
export async function dockerEngineAnswers(): Promise<boolean> {
  if (!process.env.DOCKER_HOST && !existsSync("/var/run/docker.sock")) return false;
  const r = await runCommand("docker", ["info", "--format", "{{.ServerVersion}}"], { timeoutMs: 8_000 });
  return r.code === 0 && r.stdout.trim().length > 0;
}
