import type { MemoryEntry, MemoryHit } from "./memory-store.js";

const TOKEN = /[\p{L}\p{N}]+/gu;

/** Lower-cased word tokens of a text, de-duplicated. */
export function tokenize(text: string): Set<string> {
  return new Set((text.toLowerCase().match(TOKEN) ?? []).filter((token) => token.length > 0));
}

/**
 * Token-overlap ranking: the share of the query's distinct tokens an entry's content and tags contain (0…1);
 * 0 means no match. Ties go to the newer entry. Returns at most `limit` hits with a positive score.
 */
export function rankByTokenOverlap(
  entries: readonly MemoryEntry[],
  query: string,
  options: { scope?: string | undefined; limit: number },
): MemoryHit[] {
  const wanted = tokenize(query);
  if (wanted.size === 0 || options.limit <= 0) return [];
  const hits: MemoryHit[] = [];
  for (const entry of entries) {
    if (options.scope !== undefined && entry.scope !== options.scope) continue;
    const have = tokenize(`${entry.content} ${entry.tags.join(" ")}`);
    let shared = 0;
    for (const token of wanted) if (have.has(token)) shared += 1;
    if (shared > 0) hits.push({ ...entry, tags: [...entry.tags], score: shared / wanted.size });
  }
  hits.sort((a, b) => b.score - a.score || b.createdAt.localeCompare(a.createdAt));
  return hits.slice(0, options.limit);
}
