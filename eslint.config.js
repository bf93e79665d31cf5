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
      "no-restricted-syntax": [
        "error",
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: "Packages never read process.env; services parse env once in src/env.ts." }
      ]
    }
  },
  {
    files: ["services/*/src/env.ts", "scripts/**", "packages/testkit/**", "packages/cli/src/env.ts", "test/**", "vitest.config.ts", "**/test/**"],
    rules: { "no-restricted-syntax": "off" }
  }
);
