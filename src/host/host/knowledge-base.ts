import { KeelError } from "../../errors/keel-error.js";
import { AGENT_API_ERROR_CODES, AgentApiError } from "../wire/api-error.js";

/**
 * Knowledge the host serves to runners: a knowledge base answers a query with entries in the wire's shape, a
 * rerank model orders candidate texts against a query. Both are small interfaces so a deployment can put its own
 * search behind them; the host checks the run's grant before either is asked anything.
 */

/** One retrieved passage, as `retrieve_knowledge_base` returns it. */
export interface RetrievalEntry {
  id: string;
  content: { type: "text"; text: string }[];
  metadata: Record<string, unknown>;
  /** Lower is more similar; never negative. */
  distance: number;
  /** Higher is more similar, on the backend's own scale. */
  score: number | null;
}

export interface RetrieveOptions {
  topK: number;
  /**
   * Metadata filters, every one of which an entry must pass: `{field: value}` (equal), or
   * `{field: {$eq | $ne | $in | $nin: …}}`. Anything else is refused as an invalid argument.
   */
  filters: Record<string, unknown>;
  signal?: AbortSignal;
}

export interface KnowledgeBase {
  readonly id: string;
  readonly name: string;
  /** A short kind shown to runners as `kb_type`. */
  readonly type?: string;
  retrieve(query: string, options: RetrieveOptions): Promise<RetrievalEntry[]>;
}

/** One scored document, as `invoke_rerank` returns it: its index in the request and its score. */
export interface RerankResult {
  index: number;
  relevance_score: number;
}

export interface RerankModel {
  readonly provider?: string;
  /** Every document scored, best first; the host cuts the list to the request's `top_k`. */
  rerank(
    query: string,
    documents: readonly string[],
    options: { signal?: AbortSignal },
  ): Promise<RerankResult[]>;
}

/** A document added to a builtin knowledge base; the caller cuts long texts into passages. */
export interface KnowledgeDocument {
  id: string;
  text: string;
  metadata?: Record<string, unknown>;
}

/** The most documents one rerank call may carry. */
export const MAX_RERANK_DOCUMENTS = 64;

const FILTER_OPERATORS = new Set(["$eq", "$ne", "$in", "$nin"]);

/** One filter, normalised: the field, its operator and the values it compares with. */
export interface MetadataFilter {
  field: string;
  operator: "$eq" | "$ne" | "$in" | "$nin";
  values: unknown[];
}

/** Reads the filters of a retrieval; a filter Keel cannot apply is an invalid argument, never ignored. */
export function parseFilters(filters: Record<string, unknown>): MetadataFilter[] {
  return Object.entries(filters).map(([field, condition]) => {
    if (condition === null || typeof condition !== "object" || Array.isArray(condition))
      return { field, operator: "$eq", values: [condition] };
    const entries = Object.entries(condition as Record<string, unknown>);
    const [operator, value] = entries[0] ?? [];
    if (entries.length !== 1 || operator === undefined || !FILTER_OPERATORS.has(operator)) {
      throw new AgentApiError(
        AGENT_API_ERROR_CODES.INVALID_ARGUMENT,
        `filter on ${field} must be a value or one of {$eq, $ne, $in, $nin}`,
      );
    }
    const many = operator === "$in" || operator === "$nin";
    if (many && !Array.isArray(value))
      throw new AgentApiError(AGENT_API_ERROR_CODES.INVALID_ARGUMENT, `${operator} on ${field} needs a list`);
    return {
      field,
      operator: operator as MetadataFilter["operator"],
      values: many ? (value as unknown[]) : [value],
    };
  });
}

export function passesFilters(
  metadata: Record<string, unknown>,
  filters: readonly MetadataFilter[],
): boolean {
  return filters.every(({ field, operator, values }) => {
    const value = metadata[field];
    const hit = values.some((candidate) => sameValue(value, candidate));
    return operator === "$eq" || operator === "$in" ? hit : !hit;
  });
}

function sameValue(a: unknown, b: unknown): boolean {
  // An absent field equals null, as it does in the Postgres base.
  if ((a ?? null) === (b ?? null)) return true;
  return typeof a === "object" && typeof b === "object" && JSON.stringify(a) === JSON.stringify(b);
}

// Letters and digits make words; each Han, kana or Hangul character is a word of its own, because those scripts
// do not separate words with spaces and a whole sentence would otherwise be one token.
const CJK = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])/gu;
const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased words; no stemming and no stop words. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().replace(CJK, " $1 ").match(WORD) ?? [];
}

/** BM25's usual constants. */
const K1 = 1.2;
const B = 0.75;

interface IndexedDocument {
  text: string;
  metadata: Record<string, unknown>;
  terms: Map<string, number>;
  length: number;
}

/**
 * Okapi BM25 over a set of documents held in memory: term frequency saturated by `k1 = 1.2`, document length
 * normalised by `b = 0.75`, idf `ln(1 + (N − n + 0.5) / (n + 0.5))`. Lexical only — words match exactly after
 * lower-casing, so "ships" does not find "ship" and synonyms find nothing.
 */
class Bm25Index {
  private readonly documents = new Map<string, IndexedDocument>();
  private readonly postings = new Map<string, Set<string>>();
  private totalLength = 0;

  get size(): number {
    return this.documents.size;
  }

  add(document: KnowledgeDocument): void {
    this.remove(document.id);
    const tokens = tokenize(document.text);
    const terms = new Map<string, number>();
    for (const token of tokens) terms.set(token, (terms.get(token) ?? 0) + 1);
    this.documents.set(document.id, {
      text: document.text,
      metadata: { ...document.metadata },
      terms,
      length: tokens.length,
    });
    this.totalLength += tokens.length;
    for (const term of terms.keys()) {
      const ids = this.postings.get(term) ?? new Set<string>();
      ids.add(document.id);
      this.postings.set(term, ids);
    }
  }

  remove(id: string): boolean {
    const document = this.documents.get(id);
    if (!document) return false;
    this.documents.delete(id);
    this.totalLength -= document.length;
    for (const term of document.terms.keys()) {
      const ids = this.postings.get(term);
      ids?.delete(id);
      if (ids?.size === 0) this.postings.delete(term);
    }
    return true;
  }

  get(id: string): IndexedDocument | undefined {
    return this.documents.get(id);
  }

  /** Every document sharing a word with the query and passing `accept`, with its score, best first. */
  score(query: string, accept: (document: IndexedDocument) => boolean = () => true): [string, number][] {
    const count = this.documents.size;
    if (count === 0) return [];
    const averageLength = this.totalLength / count || 1;
    const scores = new Map<string, number>();
    for (const term of new Set(tokenize(query))) {
      const ids = this.postings.get(term);
      if (!ids) continue;
      const idf = Math.log(1 + (count - ids.size + 0.5) / (ids.size + 0.5));
      for (const id of ids) {
        const document = this.documents.get(id)!;
        const frequency = document.terms.get(term)!;
        const norm = frequency + K1 * (1 - B + (B * document.length) / averageLength);
        scores.set(id, (scores.get(id) ?? 0) + (idf * frequency * (K1 + 1)) / norm);
      }
    }
    return [...scores]
      .filter(([id]) => accept(this.documents.get(id)!))
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  }
}

/** Turns a score where higher is better into a distance where lower is better, so both fields agree. */
export function distanceOf(score: number): number {
  return 1 / (1 + Math.max(0, score));
}

/**
 * The builtin knowledge base: documents added in code, held in memory and ranked with BM25 (see
 * {@link Bm25Index} for what that does and does not find). Entries carry the document's metadata and its text.
 */
export class InMemoryKnowledgeBase implements KnowledgeBase {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  private readonly index = new Bm25Index();

  constructor(options: {
    id: string;
    name?: string;
    type?: string;
    documents?: readonly KnowledgeDocument[];
  }) {
    if (options.id.length === 0) throw new KeelError("a knowledge base needs an id", { code: "host.config" });
    this.id = options.id;
    this.name = options.name ?? options.id;
    this.type = options.type ?? "bm25";
    this.add(options.documents ?? []);
  }

  /** Adds documents, replacing any with the same id. */
  add(documents: KnowledgeDocument | readonly KnowledgeDocument[]): this {
    for (const document of Array.isArray(documents) ? documents : [documents as KnowledgeDocument])
      this.index.add(document);
    return this;
  }

  remove(id: string): boolean {
    return this.index.remove(id);
  }

  get size(): number {
    return this.index.size;
  }

  async retrieve(query: string, options: RetrieveOptions): Promise<RetrievalEntry[]> {
    const filters = parseFilters(options.filters);
    return this.index
      .score(query, (document) => passesFilters(document.metadata, filters))
      .slice(0, options.topK)
      .map(([id, score]) => {
        const document = this.index.get(id)!;
        return {
          id,
          content: [{ type: "text" as const, text: document.text }],
          metadata: document.metadata,
          distance: distanceOf(score),
          score,
        };
      });
  }
}

/**
 * The builtin rerank model: BM25 of the query against the candidate documents, the documents themselves being
 * the collection the word weights come from. Lexical like the builtin knowledge base; a real cross-encoder goes
 * behind the same {@link RerankModel} interface.
 */
export function lexicalReranker(): RerankModel {
  return {
    provider: "keel",
    rerank: async (query, documents) => {
      const index = new Bm25Index();
      for (const [position, text] of documents.entries()) index.add({ id: String(position), text });
      const scored = new Map(index.score(query));
      return documents
        .map((_text, position) => ({ index: position, relevance_score: scored.get(String(position)) ?? 0 }))
        .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
    },
  };
}
