import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { brokenLinks, headingSlug } from "./markdown-links.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const at = (p: string) => join(repoRoot, p);

const markdownFiles = [
  "README.md",
  ...readdirSync(at("docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
  ...["packages/core", "packages/elasticsearch", "packages/cli", "packages/service-kit", "services/drainer", "services/catalog-api"].map((d) => `${d}/README.md`),
];

describe("the adopter docs", () => {
  it("has one page per concept, each linked from the docs index", () => {
    const index = readFileSync(at("docs/README.md"), "utf8");
    for (const page of ["configuration", "collections-and-versions", "write-path", "drainer", "reindex", "verify", "alerts-and-runbook", "sinks"]) {
      expect(index).toContain(`(${page}.md)`);
    }
  });

  it.each(markdownFiles)("%s has no broken relative link or anchor", (file) => {
    expect(brokenLinks(at(file))).toEqual([]);
  });

  it("the link checker itself catches a missing file and a missing heading", () => {
    expect(headingSlug("Oldest due job too old (`TetherOldestDueJobTooOld`, `x_y`)")).toBe("oldest-due-job-too-old-tetheroldestduejobtooold-x_y");
    const broken = brokenLinks(at("test/docs/fixtures/broken-links.md"));
    expect(broken).toEqual(["missing-page.md: no such file", "../../../docs/README.md#no-such-heading: no heading #no-such-heading"]);
  });

  it("README's \"Use Tether in your app\" shows the compiled example files verbatim", () => {
    const readme = readFileSync(at("README.md"), "utf8");
    const snippets = [...readme.matchAll(/<!-- snippet: (\S+) -->\n```ts\n([\s\S]*?)```\n/g)];
    expect(snippets.map((m) => m[1])).toEqual([
      "docs/examples/src/products-collection.ts",
      "docs/examples/tether.config.ts",
      "docs/examples/src/create-product.ts",
      "docs/examples/src/alerts-route.ts",
    ]);
    for (const [, file, code] of snippets) expect(code, `${file} differs from its README copy`).toBe(readFileSync(at(file!), "utf8"));
  });

  it.each([
    ["docs/rebuild.md", "docs/examples/src/rebuild-products.ts"],
    ["docs/collections-and-versions.md", "docs/examples/src/price-cut.ts"],
    ["docs/documents-from-several-tables.md", "docs/examples/src/shop-embeds.ts"],
    ["docs/documents-from-several-tables.md", "docs/examples/src/rename-category.ts"],
  ])("%s shows its compiled example file verbatim", (doc, file) => {
    const page = readFileSync(at(doc), "utf8");
    expect(page).toContain(`\`\`\`ts\n${readFileSync(at(file), "utf8")}\`\`\`\n\n(\`${file}\``);
  });
});
