import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ALERT_DEFAULTS, TetherOptionsSchema, VERIFY_SCHEDULE_DEFAULTS } from "@tether/core/internal";

const page = readFileSync(fileURLToPath(new URL("../../docs/configuration.md", import.meta.url)), "utf8");

/** The rows of the table after `<!-- options: <block> -->`: option name and the default's first figure. */
function documented(block: string): Map<string, string> {
  const start = page.indexOf(`<!-- options: ${block} -->`);
  expect(start, `docs/configuration.md has no <!-- options: ${block} --> table`).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, string>();
  for (const line of page.slice(start).split("\n").slice(3)) {
    const m = /^\| `(\w+)` \| `([^`]+)`/.exec(line);
    if (!m) break;
    rows.set(m[1]!, m[2]!);
  }
  return rows;
}

/** The keys the config schema accepts under `options.<block>`. */
const schemaKeys = (block: "verify" | "alerts") => Object.keys((TetherOptionsSchema.properties[block] as unknown as { properties: Record<string, unknown> }).properties).sort();

describe("docs/configuration.md lists every verify and alert option of the config schema, with the default the code applies", () => {
  it.each([
    ["verify", VERIFY_SCHEDULE_DEFAULTS],
    ["alerts", ALERT_DEFAULTS],
  ] as const)("options.%s", (block, defaults) => {
    const rows = documented(block);
    expect([...rows.keys()].sort()).toEqual(schemaKeys(block));
    expect([...rows.keys()].sort()).toEqual(Object.keys(defaults).sort());
    for (const [name, value] of rows) expect(value, `options.${block}.${name}`).toBe(String((defaults as Record<string, readonly [unknown, string]>)[name]![0]));
  });

  it("says that the verify pace holds on average, not within a window", () => {
    expect(documented("verify").get("documentsPerSecond")).toBe("20000");
    expect(page).toMatch(/`documentsPerSecond` \| `20000` \| [^\n]*\*\*on average\*\*/);
  });
});
