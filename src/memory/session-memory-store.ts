import { randomUUID } from "node:crypto";
import type { RunContext } from "../contracts/tool.js";
import type {
  MemoryEntry,
  MemoryHit,
  MemoryRecallInput,
  MemoryStore,
  MemoryWriteInput,
} from "./memory-store.js";
import { rankByTokenOverlap } from "./rank-by-token-overlap.js";

/** The session-state key the `session_store` MemoryStore keeps its entries under. */
export const SESSION_MEMORY_STATE_KEY = "keel.memory";

export interface SessionMemoryStoreOptions {
  /** Most entries kept per session; the oldest are dropped beyond it (default 1000). */
  maxEntries?: number;
}

/**
 * The builtin MemoryStore `session_store`: entries live in the session's state (persisted by the session
 * store when the run's session scope ends), bounded by `maxEntries`, recalled by {@link rankByTokenOverlap}.
 */
export class SessionMemoryStore implements MemoryStore {
  readonly maxEntries: number;

  constructor(options: SessionMemoryStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? 1000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries <= 0) {
      throw new TypeError(`maxEntries must be a positive integer, not ${options.maxEntries}`);
    }
  }

  entries(state: Readonly<Record<string, unknown>>): MemoryEntry[] {
    const value = state[SESSION_MEMORY_STATE_KEY];
    return Array.isArray(value) ? (value as MemoryEntry[]) : [];
  }

  write(input: MemoryWriteInput, ctx: RunContext): { id: string } {
    const entry: MemoryEntry = {
      id: `mem_${randomUUID()}`,
      content: input.content,
      scope: input.scope,
      tags: [...input.tags],
      createdAt: new Date().toISOString(),
      runId: ctx.runId,
    };
    const kept = [...this.entries(ctx.state), entry];
    ctx.state[SESSION_MEMORY_STATE_KEY] = kept.slice(Math.max(0, kept.length - this.maxEntries));
    return { id: entry.id };
  }

  recall(input: MemoryRecallInput, ctx: RunContext): MemoryHit[] {
    return rankByTokenOverlap(this.entries(ctx.state), input.query, {
      scope: input.scope,
      limit: input.limit,
    }).map((hit) => ({ ...hit, source: "store" as const }));
  }
}
