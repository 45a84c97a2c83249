import type { ToolContext } from "../../tools/tool.js";

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

/** A search result: an entry and how well it matched the query (higher is better). */
export interface MemoryHit extends MemoryEntry {
  score: number;
  /** Where the hit came from: `provider` or `candidate` (this or an earlier run's unreviewed candidates). */
  source?: "provider" | "candidate";
}

export interface MemoryWriteInput {
  content: string;
  scope: string;
  tags: string[];
}

export interface MemorySearchInput {
  query: string;
  /** Only entries of this scope; all scopes when absent. */
  scope?: string;
  limit: number;
}

/**
 * The memory provider contract (SB-4 `external`): what `write_memory` and `recall_memory` call. Users implement it
 * (a code object, or a module named by `{"impl": "./my-memory.js#MyProvider"}`); Keel's builtin is
 * `session_store` ({@link SessionStoreMemoryProvider}). `ctx` is the calling tool's context (session, run, state).
 */
export interface MemoryProvider {
  write(input: MemoryWriteInput, ctx: ToolContext): { id: string } | Promise<{ id: string }>;
  search(input: MemorySearchInput, ctx: ToolContext): MemoryHit[] | Promise<MemoryHit[]>;
  close?(): Promise<void>;
}

export function isMemoryProvider(value: unknown): value is MemoryProvider {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<MemoryProvider>).write === "function" &&
    typeof (value as Partial<MemoryProvider>).search === "function"
  );
}

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

/** The session-state key the `session_store` provider keeps its entries under. */
export const SESSION_MEMORY_STATE_KEY = "keel.memory";

export interface SessionStoreMemoryOptions {
  /** Most entries kept per session; the oldest are dropped beyond it (default 1000). */
  maxEntries?: number;
}

/**
 * The builtin provider `session_store`: entries live in the session's state (persisted by the session store when
 * the run's session scope ends), bounded by `maxEntries`, searched by {@link rankByTokenOverlap}.
 */
export class SessionStoreMemoryProvider implements MemoryProvider {
  readonly maxEntries: number;
  private counter = 0;

  constructor(options: SessionStoreMemoryOptions = {}) {
    this.maxEntries = options.maxEntries ?? 1000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries <= 0) {
      throw new TypeError(`maxEntries must be a positive integer, not ${options.maxEntries}`);
    }
  }

  entries(state: Readonly<Record<string, unknown>>): MemoryEntry[] {
    const value = state[SESSION_MEMORY_STATE_KEY];
    return Array.isArray(value) ? (value as MemoryEntry[]) : [];
  }

  write(input: MemoryWriteInput, ctx: ToolContext): { id: string } {
    this.counter += 1;
    const entry: MemoryEntry = {
      id: `mem_${Date.now().toString(36)}_${this.counter.toString(36)}_${Math.random().toString(36).slice(2, 8)}`,
      content: input.content,
      scope: input.scope,
      tags: [...input.tags],
      createdAt: new Date().toISOString(),
      runId: ctx.runId,
    };
    const kept = [...this.entries(ctx.session.state), entry];
    ctx.session.state[SESSION_MEMORY_STATE_KEY] = kept.slice(Math.max(0, kept.length - this.maxEntries));
    return { id: entry.id };
  }

  search(input: MemorySearchInput, ctx: ToolContext): MemoryHit[] {
    return rankByTokenOverlap(this.entries(ctx.session.state), input.query, {
      scope: input.scope,
      limit: input.limit,
    }).map((hit) => ({ ...hit, source: "provider" as const }));
  }
}
