import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/.cache/**", "**/.turbo/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      // Core works on application-defined tables it cannot type: Kysely<any> and Collection<any> are deliberate.
      "@typescript-eslint/no-explicit-any": "off",
      "no-restricted-syntax": [
        "error",
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: "Packages never read process.env; services parse env once in src/env.ts." }
      ]
    }
  },
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: { process: "readonly", console: "readonly", URL: "readonly", Buffer: "readonly" } },
  },
  {
    files: ["services/*/src/env.ts", "scripts/**", "packages/testkit/**", "packages/cli/src/env.ts", "test/**", "vitest.config.ts", "**/test/**"],
    rules: { "no-restricted-syntax": "off" }
  }
);
