import { z } from "zod";
import type { RunContext } from "../contracts/tool.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import type { Memory } from "./memory.js";

/** The config of the `chain` memory: the memory refs it combines, in injection order. */
export const chainMemoryConfigSchema = builtOnFirstUse(() =>
  z.object({
    memories: z.array(z.unknown()).min(1, "chain needs at least one memory"),
  }),
);

/**
 * Combines memories: inject runs in order, writeback and close in reverse order (so the outermost memory
 * sees the others' writes last, like nested scopes), retrieve concatenates their results in order.
 */
export class ChainMemory implements Memory {
  readonly memories: readonly Memory[];

  constructor(memories: readonly Memory[]) {
    this.memories = memories;
  }

  async inject(ctx: RunContext): Promise<void> {
    for (const memory of this.memories) await memory.inject(ctx);
  }

  async writeback(ctx: RunContext): Promise<void> {
    for (let index = this.memories.length - 1; index >= 0; index--)
      await this.memories[index]!.writeback(ctx);
  }

  async retrieve(query: string, ctx: RunContext): Promise<Record<string, unknown>[]> {
    const results: Record<string, unknown>[] = [];
    for (const memory of this.memories) results.push(...(await memory.retrieve(query, ctx)));
    return results;
  }

  /** Closes every memory even when one fails, then rethrows the first failure. */
  async close(): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (let index = this.memories.length - 1; index >= 0; index--) {
      try {
        await this.memories[index]!.close?.();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
