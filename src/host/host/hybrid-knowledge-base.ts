import { KeelError } from "../../errors/keel-error.js";
import {
  distanceOf,
  type KnowledgeBase,
  type RetrievalEntry,
  type RetrieveOptions,
} from "./knowledge-base.js";

/**
 * Reciprocal rank fusion of several knowledge bases holding the same documents under the same ids — typically a
 * lexical one (exact words, names, codes) and a vector one (meaning): each base ranks its candidates, and a
 * document scores Σ 1 / (k + rank) over the bases that found it, so one found high by either, or fairly high by
 * both, leads. Ranks, not scores, are fused: BM25 and cosine are on scales that cannot be added. `k` is 60, the
 * usual constant; each base is asked for `candidates` (at least `top_k`, 4 × `top_k` by default, at most 100).
 */
export function createHybridKnowledgeBase(options: {
  id: string;
  name?: string;
  bases: readonly KnowledgeBase[];
  k?: number;
  candidates?: number;
}): KnowledgeBase {
  const { id, bases } = options;
  const k = options.k ?? 60;
  if (id.length === 0 || bases.length === 0 || !(k > 0)) {
    throw new KeelError("a hybrid knowledge base needs an id, one base or more and a positive k", {
      code: "host.config",
      hint: "Pass createHybridKnowledgeBase({id, bases: [lexical, vector]})",
    });
  }
  return {
    id,
    name: options.name ?? id,
    type: "hybrid",
    retrieve: async (query: string, retrieveOptions: RetrieveOptions): Promise<RetrievalEntry[]> => {
      const candidates = Math.min(
        100,
        Math.max(retrieveOptions.topK, options.candidates ?? retrieveOptions.topK * 4),
      );
      const ranked = await Promise.all(
        bases.map((base) => base.retrieve(query, { ...retrieveOptions, topK: candidates })),
      );
      const fused = new Map<string, { entry: RetrievalEntry; score: number }>();
      for (const entries of ranked) {
        for (const [rank, entry] of entries.entries()) {
          const known = fused.get(entry.id);
          const share = 1 / (k + rank + 1);
          if (known) known.score += share;
          else fused.set(entry.id, { entry, score: share });
        }
      }
      return [...fused.values()]
        .sort((a, b) => b.score - a.score || (a.entry.id < b.entry.id ? -1 : 1))
        .slice(0, retrieveOptions.topK)
        .map(({ entry, score }) => ({ ...entry, score, distance: distanceOf(score) }));
    },
  };
}
