#!/usr/bin/env bash
# Regenerates packages/core/schema.sql: tether's schema after all migrations, so every schema
# change shows up in review as a diff. Needs DATABASE_URL pointing at a server (any database).
# `--check` writes nothing and exits 1 when the committed schema.sql is out of date (CI runs it
# through packages/core/test/schema-dump.test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
url="${DATABASE_URL:?set DATABASE_URL}"
db="tether_schema_dump_$$"
psql -q "$url" -c "CREATE DATABASE $db"
trap 'psql -q "$url" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)"' EXIT
target=$(node -e 'const u=new URL(process.argv[1]); u.pathname="/"+process.argv[2]; console.log(u.toString())' "$url" "$db")
node --conditions=source --import tsx -e '
import("./src/index.ts").then(async ({ createDb, migrate }) => {
  const db = createDb({ connectionString: process.argv[1] });
  await migrate(db);
  await db.destroy();
});' "$target"
dump() {
  pg_dump --schema-only --no-owner --no-privileges --schema=tether "$target" \
    | grep -v -E '^(--|SET |SELECT pg_catalog.set_config|\\(un)?restrict)' | cat -s
}
if [ "${1:-}" = "--check" ]; then
  if ! diff -u schema.sql <(dump) >&2; then
    echo "packages/core/schema.sql is out of date: run \`pnpm --filter @tether/core schema\`" >&2
    exit 1
  fi
else
  dump > schema.sql
  echo "wrote packages/core/schema.sql"
fi
