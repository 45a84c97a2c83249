import type { RunContext } from "../contracts/tool.js";
import { ToolError } from "../errors/error-classes.js";

/** One remembered thing. */
export interface MemoryEntry {
  id: string;
  content: string;
  scope: string;
  tags: string[];
  createdAt: string;
  /** The run that wrote it, when known. */
  runId?: string;
}

/** A recall result: an entry and how well it matched the query (higher is better). */
export interface MemoryHit extends MemoryEntry {
  score: number;
  /**
   * Where it came from: `store` (a MemoryStore's `recall`), `retrieve` (a memory plugin's `retrieve`, which
   * gives no score: its order is kept, scores falling from 1), or `candidate` (a run's unreviewed candidates).
   */
  source?: "store" | "retrieve" | "candidate";
}

export interface MemoryWriteInput {
  content: string;
  scope: string;
  tags: string[];
}

export interface MemoryRecallInput {
  query: string;
  /** Only entries of this scope; all scopes when absent. */
  scope?: string;
  limit: number;
}

/**
 * The MemoryStore ability (`external`): what `write_memory` writes through and `recall_memory` searches.
 * A memory plugin (the agent's `memory`) has it when it implements `write`; `recall` is optional there, and
 * `retrieve` answers recalls without it. A toolset's own `provider` is a MemoryStore with both. `ctx` is the
 * calling tool's context, a {@link RunContext}: `ctx.state` is the session's persisted state.
 */
export interface MemoryStore {
  write(input: MemoryWriteInput, ctx: RunContext): { id: string } | Promise<{ id: string }>;
  recall?(input: MemoryRecallInput, ctx: RunContext): MemoryHit[] | Promise<MemoryHit[]>;
  close?(): Promise<void>;
}

/** What a memory plugin without `recall` answers recalls with (the memory seam's own `retrieve`). */
export interface RetrievingMemory {
  retrieve(query: string, ctx: RunContext): Record<string, unknown>[] | Promise<Record<string, unknown>[]>;
}

/** Whether a value has the MemoryStore ability: a `write` method. */
export function isMemoryStore(value: unknown): value is MemoryStore {
  return typeof (value as Partial<MemoryStore> | null)?.write === "function";
}

/** What can answer `recall_memory`: a MemoryStore with `recall`, or a memory plugin with `retrieve`. */
export type RecallSource = Partial<MemoryStore> & Partial<RetrievingMemory>;

/** Whether a value can answer `recall_memory`: a `recall` or a `retrieve` method. */
export function canRecall(value: unknown): value is RecallSource {
  const candidate = value as (Partial<MemoryStore> & Partial<RetrievingMemory>) | null;
  return typeof candidate?.recall === "function" || typeof candidate?.retrieve === "function";
}

/**
 * Recall through a store: its `recall`, else its `retrieve` ("falling back to retrieve"), whose records
 * become hits in their order — `content` a string field or the record as JSON, filtered by scope when one is
 * asked (a record without `scope` is in `default`), at most `limit`.
 */
export async function recallFrom(
  store: RecallSource,
  input: MemoryRecallInput,
  ctx: RunContext,
): Promise<MemoryHit[]> {
  if (typeof store.recall === "function") {
    const hits = await store.recall(input, ctx);
    if (!Array.isArray(hits)) throw new ToolError("the memory store's recall returned no array");
    return hits.map((hit) => ({ ...hit, source: hit.source ?? "store" }));
  }
  if (typeof store.retrieve !== "function") return [];
  const records = await store.retrieve(input.query, ctx);
  if (!Array.isArray(records)) throw new ToolError("the memory plugin's retrieve returned no array");
  const hits: MemoryHit[] = [];
  for (const [index, record] of records.entries()) {
    const hit = hitOfRecord(record, index, records.length);
    if (input.scope !== undefined && hit.scope !== input.scope) continue;
    hits.push(hit);
    if (hits.length >= input.limit) break;
  }
  return hits;
}

/** Longest `content` a retrieved record becomes (a record without a text field is shown as JSON). */
const MAX_RETRIEVED_CHARS = 4000;

function hitOfRecord(record: Record<string, unknown>, index: number, count: number): MemoryHit {
  const text = (key: string) => (typeof record[key] === "string" ? (record[key] as string) : undefined);
  const tags = Array.isArray(record.tags) ? record.tags.filter((tag) => typeof tag === "string") : [];
  return {
    id: text("id") ?? `retrieved_${index + 1}`,
    content: (text("content") ?? text("memory") ?? JSON.stringify(record)).slice(0, MAX_RETRIEVED_CHARS),
    scope: text("scope") ?? "default",
    tags,
    createdAt: text("createdAt") ?? text("created_at") ?? "",
    score: (count - index) / count,
    source: "retrieve",
  };
}
