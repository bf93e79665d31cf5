import js from "@eslint/js";
import tseslint from "typescript-eslint";

// SQL lives in migrations and in one store module per table (`*-store.ts`, and core's store/
// folder): nowhere else in a package's or service's sources may a statement be written or run.
const processEnv = { selector: "MemberExpression[object.name='process'][property.name='env']", message: "Packages never read process.env; services parse env once in src/env.ts." };
const sqlOutsideStores = [
  { selector: "ImportSpecifier[imported.name='sql']", message: "Kysely's sql tag belongs in a *-store.ts file or a migration." },
  {
    // A query builder's execute (raw or not) runs SQL; `db.transaction().execute(fn)` only opens a transaction.
    selector: "CallExpression[callee.property.name=/^(execute|executeTakeFirst|executeTakeFirstOrThrow|executeQuery|query)$/]:not([callee.object.callee.property.name='transaction'])",
    message: "Statements run only in *-store.ts files and migrations: add a function to the table's store.",
  },
];
const sourceFiles = ["packages/*/src/**/*.ts", "services/*/src/**/*.ts"];
const storeFiles = ["**/*-store.ts", "packages/core/src/store/**", "**/migrations/**", "**/*-migrations.ts", "packages/testkit/**"];

export default tseslint.config(
  { ignores: ["**/dist/**", "**/web-dist/**", "docs/api/**", "**/node_modules/**", "**/.cache/**", "**/.turbo/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      // Core works on application-defined tables it cannot type: Kysely<any> and Collection<any> are deliberate.
      "@typescript-eslint/no-explicit-any": "off",
      "no-restricted-syntax": ["error", processEnv],
    }
  },
  {
    files: sourceFiles,
    ignores: storeFiles,
    rules: { "no-restricted-syntax": ["error", processEnv, ...sqlOutsideStores] },
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", Buffer: "readonly" } },
  },
  {
    // An application's tether.config.ts is its own code and may pick by environment (TETHER_SINK).
    files: ["services/*/src/env.ts", "tether.config.ts", "services/catalog-api/catalog.config.ts", "scripts/**", "packages/testkit/**", "packages/cli/src/env.ts", "docs/examples/**", "test/**", "vitest.config.ts", "**/test/**"],
    rules: { "no-restricted-syntax": "off" }
  }
);
