import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MATRIX_COMBINATIONS } from "./matrix-combinations.js";

const readme = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");
const COLUMNS = ["elasticsearch@8", "elasticsearch@9", "opensearch@2", "opensearch@3"];

/** The README's compatibility table as cells: `Postgres <major>` × `<product>@<major>` → text. */
function table(): Map<string, string> {
  const section = readme.slice(readme.indexOf("## Compatibility: what is tested where"));
  const cells = new Map<string, string>();
  for (const line of section.split("\n")) {
    const m = /^\| Postgres (\d+) \|(.*)\|$/.exec(line);
    if (!m) continue;
    m[2]!.split("|").forEach((cell, i) => cells.set(`${m[1]}:${COLUMNS[i]}`, cell.trim()));
  }
  return cells;
}

describe("the README's compatibility table", () => {
  it("marks exactly the combinations scripts/test-matrix runs as test-matrix", () => {
    const cells = table();
    expect(cells.size).toBe(5 * COLUMNS.length);
    const runs = new Set(MATRIX_COMBINATIONS.map((c) => `${c.postgres}:${c.engine.product}@${c.engine.major}`));
    for (const [key, text] of cells) expect(text.includes("test-matrix"), `${key}: "${text}"`).toBe(runs.has(key));
  });
});
