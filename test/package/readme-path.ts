import { readFileSync } from "node:fs";
import { join } from "node:path";

/** What the README's "Use Tether in your app" tells a newcomer to type and to write, read from the README itself so the test cannot drift from it. */
export interface ReadmePath {
  /** Step 1's `scripts/pack-packages …` line, run in the Tether checkout. */
  pack: string;
  /** Step 1's `pnpm add …` lines, run in the app. */
  install: string[];
  /** The snippet files (path relative to the app, as docs/examples holds them) and their code, verbatim. */
  files: { path: string; code: string }[];
  /** Step 5's `pnpm exec …` lines. */
  run: string[];
}

const section = (readme: string) => {
  const start = readme.indexOf("## Use Tether in your app");
  const end = readme.indexOf("\n## ", start + 1);
  if (start < 0 || end < 0) throw new Error('README.md has no "Use Tether in your app" section');
  return readme.slice(start, end);
};

// The command lines of the shell blocks of a step, comments dropped.
const shellLines = (text: string) =>
  [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split("\n").map((l) => l.replace(/\s+#.*$/, "").trim()).filter(Boolean));

export function readmePath(repoRoot: string): ReadmePath {
  const text = section(readFileSync(join(repoRoot, "README.md"), "utf8"));
  const step = (n: number) => {
    const from = text.indexOf(`**${n}. `);
    const to = text.indexOf(`**${n + 1}. `);
    return text.slice(from, to < 0 ? undefined : to);
  };
  const install = shellLines(step(1));
  const pack = install.find((l) => l.startsWith("scripts/pack-packages "));
  if (!pack) throw new Error("README step 1 has no scripts/pack-packages line");
  const files = [...text.matchAll(/<!-- snippet: docs\/examples\/(\S+) -->\n```ts\n([\s\S]*?)```\n/g)].map((m) => ({ path: m[1]!, code: m[2]! }));
  return { pack, install: install.filter((l) => l.startsWith("pnpm add ")), files, run: shellLines(step(5)).filter((l) => l.startsWith("pnpm exec ")) };
}
