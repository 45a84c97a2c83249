import type { RunContext } from "../contracts/tool.js";

/** The memory seam: inject what the run should remember, write back what it learned. */
export interface Memory {
  inject(ctx: RunContext): void | Promise<void>;
  writeback(ctx: RunContext): void | Promise<void>;
  retrieve(query: string, ctx: RunContext): Record<string, unknown>[] | Promise<Record<string, unknown>[]>;
  close?(): Promise<void>;
}
