import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A `pg_dump` of a database (custom format), as an operator's nightly backup. */
export interface PostgresBackup {
  file: string;
  /** Removes the dump. */
  remove(): void;
}

/** Dumps the database at `url` with `pg_dump -Fc` (the client of this machine's server). */
export async function backupDatabase(url: string): Promise<PostgresBackup> {
  const dir = mkdtempSync(join(tmpdir(), "tether-backup-"));
  const file = join(dir, "backup.dump");
  await run("pg_dump", ["--format=custom", `--file=${file}`, url], { maxBuffer: 16 * 1024 * 1024 });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Restores a backup over the database at `url` as the disaster recovery does: every object
 * dropped and made again from the dump (`pg_restore --clean --if-exists`), in one transaction,
 * sequences included. Whatever was written after the dump is gone. Sessions of other processes
 * must be closed (they would hold locks on what is dropped).
 */
export async function restoreBackup(url: string, backup: PostgresBackup): Promise<void> {
  await run("pg_restore", ["--clean", "--if-exists", "--no-owner", "--single-transaction", `--dbname=${url}`, backup.file], { maxBuffer: 16 * 1024 * 1024 });
}
