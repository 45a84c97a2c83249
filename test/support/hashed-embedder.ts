import type { Embedder } from "../../src/host/index.js";
import { tokenize } from "../../src/host/index.js";

/** "vessel" and "boat" embed where "ship" does, as a real embedding model would put them near. */
export const SYNONYMS = [["ship", "ships", "vessel", "boat"]];

/**
 * A deterministic embedder for tests: a hashed bag of words (each word counted in one of `dimensions` slots (769, a prime that keeps the tests' words apart) by
 * its FNV-1a hash), where the words of a synonym group share their group's first word's slot — so "vessel"
 * lands where "ship" does, as a real embedding model would put them near. `calls` counts the texts embedded.
 */
export function hashedEmbedder(
  options: { dimensions?: number; synonyms?: readonly (readonly string[])[] } = {},
): Embedder & { calls: number[] } {
  const dimensions = options.dimensions ?? 769;
  const canonical = new Map<string, string>();
  for (const group of options.synonyms ?? []) for (const word of group) canonical.set(word, group[0]!);
  const calls: number[] = [];
  return {
    calls,
    embed: async (texts) => {
      calls.push(texts.length);
      return texts.map((text) => {
        const vector = new Array<number>(dimensions).fill(0);
        for (const word of tokenize(text)) vector[fnv1a(canonical.get(word) ?? word) % dimensions]! += 1;
        return vector;
      });
    },
  };
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
}

/** The cosine of two texts' embeddings, computed here in full, for checking a base's scores. */
export async function cosineOf(embedder: Embedder, a: string, b: string): Promise<number> {
  const [x, y] = await embedder.embed([a, b]);
  const dot = (u: number[], v: number[]) => u.reduce((sum, value, index) => sum + value * v[index]!, 0);
  return dot(x!, y!) / Math.sqrt(dot(x!, x!) * dot(y!, y!));
}
