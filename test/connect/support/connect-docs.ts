import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const page = () => readFileSync(fileURLToPath(new URL("../../../docs/connecting.md", import.meta.url)), "utf8");

/** A role of docs/connecting.md, as written there (`<!-- role: <engine> <name> -->` then a json block). */
export function roleFromDocs(engine: "elasticsearch" | "opensearch", name: string): Record<string, unknown> {
  const m = new RegExp(`<!-- role: ${engine} ${name} -->\\n\`\`\`json\\n([\\s\\S]*?)\`\`\``).exec(page());
  if (!m) throw new Error(`docs/connecting.md has no role ${engine} ${name}`);
  return JSON.parse(m[1]!) as Record<string, unknown>;
}

/** The variables an example of docs/connecting.md exports (`<!-- example: <name> -->` then a sh block), as written. */
export function exampleFromDocs(name: string): Record<string, string> {
  const m = new RegExp(`<!-- example: ${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(page());
  if (!m) throw new Error(`docs/connecting.md has no example ${name}`);
  const vars: Record<string, string> = {};
  for (const line of m[1]!.split("\n")) {
    if (!line.startsWith("export ")) continue;
    for (const [, k, v] of line.slice(7).matchAll(/([A-Z_]+)=('[^']*'|\S+)/g)) vars[k!] = v!.replace(/^'|'$/g, "");
  }
  return vars;
}
