/** Reads one series from Prometheus text exposition: the sum over series whose labels include `labels`. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let found: number | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map<string, string>();
    for (const kv of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) have.set(kv[1]!, kv[2]!);
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) found = (found ?? 0) + Number(m[3]);
  }
  return found;
}
