/**
 * A port of the parts of Python's `difflib` that config errors use to suggest the key a user meant.
 * Keel's hints must name the same suggestion the Python tools users know name, so this follows
 * `SequenceMatcher(None, a, b).ratio()` and `get_close_matches(word, possibilities, n=1, cutoff)` step by step
 * rather than using some other edit distance.
 */

/** Strings compare by code point, as Python's do; a JS string indexes UTF-16 units. */
function codePoints(text: string): string[] {
  return Array.from(text);
}

interface Match {
  i: number;
  j: number;
  size: number;
}

/** `SequenceMatcher.__chain_b`: where each element of `b` occurs, minus "popular" elements (autojunk). */
function chainB(b: string[]): Map<string, number[]> {
  const b2j = new Map<string, number[]>();
  b.forEach((element, index) => {
    const indices = b2j.get(element);
    if (indices) indices.push(index);
    else b2j.set(element, [index]);
  });
  // difflib's autojunk heuristic: in a sequence of 200+ elements, an element making up more than 1% of it is
  // treated as noise and never starts a match (it can still extend one).
  if (b.length >= 200) {
    const limit = Math.floor(b.length / 100) + 1;
    for (const [element, indices] of [...b2j]) {
      if (indices.length > limit) b2j.delete(element);
    }
  }
  return b2j;
}

/** The two sequences a `SequenceMatcher` compares, with `b2j` (from {@link chainB}) indexing `b`. */
interface MatchedPair {
  a: string[];
  b: string[];
  b2j: Map<string, number[]>;
}

/** `SequenceMatcher.find_longest_match` with no junk function: the earliest longest block of a[alo:ahi] in b[blo:bhi]. */
function findLongestMatch(
  { a, b, b2j }: MatchedPair,
  range: { alo: number; ahi: number; blo: number; bhi: number },
): Match {
  const { alo, ahi, blo, bhi } = range;
  let besti = alo;
  let bestj = blo;
  let bestsize = 0;
  // j2len[j] = length of the longest match ending with a[i-1] and b[j]
  let j2len = new Map<number, number>();
  for (let i = alo; i < ahi; i++) {
    const newj2len = new Map<number, number>();
    for (const j of b2j.get(a[i] as string) ?? []) {
      if (j < blo) continue;
      if (j >= bhi) break;
      const k = (j2len.get(j - 1) ?? 0) + 1;
      newj2len.set(j, k);
      if (k > bestsize) {
        besti = i - k + 1;
        bestj = j - k + 1;
        bestsize = k;
      }
    }
    j2len = newj2len;
  }
  // Popular elements were left out of b2j, so extend the block over equal neighbours (difflib's "non-junk"
  // extension; with no junk function the junk extension that follows it in difflib never applies).
  while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
    besti--;
    bestj--;
    bestsize++;
  }
  while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) {
    bestsize++;
  }
  return { i: besti, j: bestj, size: bestsize };
}

/** `SequenceMatcher.get_matching_blocks`, summed: the number of elements in matching blocks. */
function countMatches(a: string[], b: string[]): number {
  const pair: MatchedPair = { a, b, b2j: chainB(b) };
  const queue = [{ alo: 0, ahi: a.length, blo: 0, bhi: b.length }];
  let matches = 0;
  while (queue.length > 0) {
    const range = queue.pop()!;
    const { i, j, size } = findLongestMatch(pair, range);
    if (size === 0) continue;
    matches += size;
    if (range.alo < i && range.blo < j) queue.push({ alo: range.alo, ahi: i, blo: range.blo, bhi: j });
    if (i + size < range.ahi && j + size < range.bhi) {
      queue.push({ alo: i + size, ahi: range.ahi, blo: j + size, bhi: range.bhi });
    }
  }
  // difflib merges adjacent blocks before summing; merging does not change the total, so it is skipped here.
  return matches;
}

/**
 * `difflib.SequenceMatcher(None, a, b).ratio()`: 2·M / (len(a) + len(b)), M being the elements in matching
 * blocks; 1 for two empty strings. Not symmetric in general, exactly like difflib.
 */
export function similarityRatio(a: string, b: string): number {
  const left = codePoints(a);
  const right = codePoints(b);
  const length = left.length + right.length;
  if (length === 0) return 1;
  return (2 * countMatches(left, right)) / length;
}

/** Python's `str` ordering (by code point), which `heapq.nlargest` uses to break ties between equal ratios. */
function compareCodePoints(a: string, b: string): number {
  const left = codePoints(a);
  const right = codePoints(b);
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    const diff = (left[index] as string).codePointAt(0)! - (right[index] as string).codePointAt(0)!;
    if (diff !== 0) return diff;
  }
  return left.length - right.length;
}

/**
 * The candidate closest to `needle`, or `undefined` when none reaches `cutoff`: `difflib.get_close_matches(needle,
 * candidates, n=1, cutoff)[0]`. Each ratio is `similarityRatio(candidate, needle)` (difflib sets the word as the
 * second sequence); among equal ratios the greatest string wins, as `nlargest` on `(ratio, candidate)` does.
 */
export function nearMatch(
  needle: string,
  candidates: Iterable<string>,
  { cutoff = 0.6 }: { cutoff?: number } = {},
): string | undefined {
  if (!(cutoff >= 0 && cutoff <= 1)) throw new RangeError(`cutoff must be in [0.0, 1.0], not ${cutoff}`);
  let best: { ratio: number; candidate: string } | undefined;
  for (const candidate of candidates) {
    const ratio = similarityRatio(candidate, needle);
    if (ratio < cutoff) continue;
    if (
      best === undefined ||
      ratio > best.ratio ||
      (ratio === best.ratio && compareCodePoints(candidate, best.candidate) > 0)
    ) {
      best = { ratio, candidate };
    }
  }
  return best?.candidate;
}
