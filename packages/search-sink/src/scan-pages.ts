import type { ScannedDocument } from "@tether/core";
import { META_FIELD } from "./document-meta.js";
import type { SearchAnswer } from "./engine-answers.js";

type Page = SearchAnswer & { _scroll_id?: string };

function toDoc(h: SearchAnswer["hits"]["hits"][number]): ScannedDocument {
  const { [META_FIELD]: meta, ...source } = (h._source ?? {}) as Record<string, unknown>;
  const m = meta as { deleted?: boolean; content?: string; version?: number } | undefined;
  const deleted = m?.deleted === true;
  return {
    id: String(h._id),
    version: Number(h._version ?? 0),
    tethered: m !== undefined && m.version !== undefined,
    deleted,
    ...(m?.content ? { content: m.content } : {}),
    ...(deleted ? {} : { source }),
  };
}

/**
 * The pages of one scroll as scanned documents: a consistent snapshot of the index, the next
 * page requested while the caller works on this one, the scroll cleared however the caller
 * stops. A missing index scans as empty.
 */
export async function* scanPages(s: {
  size: number;
  start: () => Promise<Page>;
  next: (scrollId: string) => Promise<Page>;
  clear: (scrollId: string) => Promise<void>;
  isMissingIndex: (err: unknown) => boolean;
}): AsyncIterable<ScannedDocument[]> {
  let first: Page;
  try {
    first = await s.start();
  } catch (err) {
    if (s.isMissingIndex(err)) return;
    throw err;
  }
  let scrollId = first._scroll_id;
  let page: Page = first;
  try {
    while (page.hits.hits.length > 0) {
      const hits = page.hits.hits;
      // Ask for the next page before handing this one over: the engine reads while the caller compares.
      const next = hits.length < s.size || !scrollId ? undefined : s.next(scrollId);
      next?.catch(() => undefined);
      yield hits.map(toDoc);
      if (!next) break;
      page = await next;
      scrollId = page._scroll_id ?? scrollId;
    }
  } finally {
    if (scrollId) await s.clear(scrollId).catch(() => undefined);
  }
}
