/**
 * The methods each route path answers, so a request for a known path with another method gets
 * 405 and an `Allow` header instead of a 404. Fed by Fastify's `onRoute` hook.
 */
export class RouteMethods {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];
  private readonly byUrl = new Map<string, Set<string>>();

  add(url: string, method: string | string[]): void {
    let methods = this.byUrl.get(url);
    if (!methods) {
      methods = new Set();
      this.byUrl.set(url, methods);
      this.routes.push({ pattern: toPattern(url), methods });
    }
    for (const m of Array.isArray(method) ? method : [method]) methods.add(m.toUpperCase());
  }

  /** Methods allowed on `path` (no query string), sorted; empty when no route has this path. */
  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const r of this.routes) if (r.pattern.test(path)) for (const m of r.methods) out.add(m);
    return [...out].sort();
  }
}

// find-my-way syntax: ":name" (optionally with a "(regex)" we do not need to honour to know the
// path exists), and "*" for the rest of the path.
function toPattern(url: string): RegExp {
  let re = "";
  for (let i = 0; i < url.length; i++) {
    const c = url[i]!;
    if (c === ":" && url[i + 1] !== ":") {
      while (i + 1 < url.length && /[A-Za-z0-9_]/.test(url[i + 1]!)) i++;
      if (url[i + 1] === "(") {
        let depth = 0;
        do {
          i++;
          if (url[i] === "(") depth++;
          if (url[i] === ")") depth--;
        } while (i < url.length && depth > 0);
      }
      re += "[^/]+";
    } else if (c === "*") re += ".*";
    else re += c.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}/?$`);
}
