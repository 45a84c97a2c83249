import { KeelError } from "../../errors/keel-error.js";
import { checkVectorLength, cosineDistance, dot, type Embedder, embedUnitVectors } from "./embedder.js";
import {
  type KnowledgeBase,
  type KnowledgeDocument,
  parseFilters,
  passesFilters,
  type RetrievalEntry,
  type RetrieveOptions,
} from "./knowledge-base.js";

/** Texts sent to the embedder in one call, unless the base is told otherwise. */
export const DEFAULT_EMBED_BATCH = 64;

interface StoredDocument {
  text: string;
  metadata: Record<string, unknown>;
  vector: Float64Array;
}

/**
 * A knowledge base of embeddings held in memory: each document's text is embedded when added, a query is
 * embedded when asked, and the documents passing the filters are ranked by cosine similarity — exactly, every
 * document compared, which is what a few thousand passages need and no index would beat. It finds what the
 * embedder puts near the query: with a real embedding model, "ships" finds "vessel"; it is only as good as that.
 * `score` is the cosine (higher is closer), `distance` is 1 − cosine.
 */
export class InMemoryVectorKnowledgeBase implements KnowledgeBase {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  private readonly embedder: Embedder;
  private readonly batchSize: number;
  private readonly documents = new Map<string, StoredDocument>();

  constructor(options: { id: string; name?: string; type?: string; embedder: Embedder; batchSize?: number }) {
    if (options.id.length === 0) throw new KeelError("a knowledge base needs an id", { code: "host.config" });
    this.id = options.id;
    this.name = options.name ?? options.id;
    this.type = options.type ?? "vector";
    this.embedder = options.embedder;
    this.batchSize = options.batchSize ?? DEFAULT_EMBED_BATCH;
  }

  /** Embeds and adds documents, replacing any with the same id; none is added when the embedder fails. */
  async add(documents: KnowledgeDocument | readonly KnowledgeDocument[]): Promise<void> {
    const list = Array.isArray(documents) ? documents : [documents as KnowledgeDocument];
    const vectors = await embedUnitVectors(
      this.embedder,
      list.map((document) => document.text),
      { batchSize: this.batchSize },
    );
    checkVectorLength(this.documents.values().next().value?.vector.length, vectors);
    for (const [index, document] of list.entries()) {
      this.documents.set(document.id, {
        text: document.text,
        metadata: { ...document.metadata },
        vector: vectors[index]!,
      });
    }
  }

  remove(id: string): boolean {
    return this.documents.delete(id);
  }

  get size(): number {
    return this.documents.size;
  }

  async retrieve(query: string, options: RetrieveOptions): Promise<RetrievalEntry[]> {
    const filters = parseFilters(options.filters);
    if (this.documents.size === 0) return [];
    const [vector] = await embedUnitVectors(this.embedder, [query], {
      batchSize: 1,
      signal: options.signal,
    });
    // A query that embeds to nothing (no words the embedder knows) is similar to nothing.
    if (!vector?.some((value) => value !== 0)) return [];
    return [...this.documents]
      .filter(([, document]) => passesFilters(document.metadata, filters))
      .map(([id, document]) => ({ id, document, cosine: dot(vector, document.vector) }))
      .sort((a, b) => b.cosine - a.cosine || (a.id < b.id ? -1 : 1))
      .slice(0, options.topK)
      .map(({ id, document, cosine }) => ({
        id,
        content: [{ type: "text" as const, text: document.text }],
        metadata: document.metadata,
        distance: cosineDistance(cosine),
        score: cosine,
      }));
  }
}
