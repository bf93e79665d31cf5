/**
 * The drift that is still there once the queue has had its say.
 *
 * A scheduled run compares while drains go on. A drain pass writes an entity's document and
 * only then lets its job leave the queue (both in its transaction), so an entity read as
 * different a moment before its pass committed may have no job left by the time the queue is
 * read: it was being repaired, not drifting. So entities with a queued job are left out; the
 * others are read again (after the queue was read: a job gone by then had its document written)
 * and only those still different are kept; the queue is read once more for a write that came
 * in between. `reread` returns, of the ids it is given, those still different, each with its kind.
 */
export async function settledDrift<K>(
  found: ReadonlyMap<string, K>,
  reread: (ids: readonly string[]) => Promise<Map<string, K>>,
  queued: (ids: readonly string[]) => Promise<ReadonlySet<string>>,
): Promise<Map<string, K>> {
  let current = new Map(found);
  for (let round = 0; current.size > 0; round++) {
    const described = await queued([...current.keys()]);
    for (const id of described) current.delete(id);
    if (round === 1 || current.size === 0) break;
    current = await reread([...current.keys()]);
  }
  return current;
}
