import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(text: string): string {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

const withoutCode = (md: string) => md.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, (m) => (m.includes("](") ? "" : m));

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of withoutCode(readFileSync(file, "utf8")).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = headingSlug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every relative link of a markdown file whose file or heading does not exist. */
export function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const m of withoutCode(readFileSync(file, "utf8")).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^(https?:|mailto:)/.test(target)) continue;
    const [path, anchor] = target.split("#") as [string, string | undefined];
    const resolved = path === "" ? file : resolve(dirname(file), path);
    if (!existsSync(resolved)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (anchor !== undefined && statSync(resolved).isFile() && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) {
      broken.push(`${target}: no heading #${anchor}`);
    }
  }
  return broken;
}
