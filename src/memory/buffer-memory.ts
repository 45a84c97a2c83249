import { z } from "zod";
import type { RunContext } from "../contracts/tool.js";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import type { Memory } from "./memory.js";

/** The config of the `buffer` memory (snake_case, as users write it in `agent.json`). */
export const bufferMemoryConfigSchema = builtOnFirstUse(() =>
  z.object({
    state_key: z.string().min(1).default("memory_buffer"),
    view_key: z.string().min(1).default("history"),
    max_items: z.number().int().min(1).nullable().default(null),
  }),
);

/** One remembered run: what was asked, which tools answered what, and what the run produced. */
export interface BufferMemoryRecord {
  input: string;
  toolResults: { toolId: string; result: unknown }[];
  output?: unknown;
}

/** Options of {@link BufferMemory}. */
export interface BufferMemoryOptions {
  /** Session-state key the records live under (persisted with the session). */
  stateKey?: string;
  /** `ctx.memoryView` key the records are injected under. */
  viewKey?: string;
  /** Keep only this many newest records; `null` or absent keeps all. */
  maxItems?: number | null;
}

/**
 * Remembers every run of a session in the session state and shows the records to the next run as
 * `ctx.memoryView[viewKey]`.
 */
export class BufferMemory implements Memory {
  readonly stateKey: string;
  readonly viewKey: string;
  readonly maxItems: number | null;

  constructor(options: BufferMemoryOptions = {}) {
    this.stateKey = options.stateKey ?? "memory_buffer";
    this.viewKey = options.viewKey ?? "history";
    this.maxItems = options.maxItems ?? null;
  }

  inject(ctx: RunContext): void {
    const records = this.records(ctx);
    // A copy, so the view a pattern reads stays what it was at injection even after writeback appends.
    ctx.memoryView[this.viewKey] = this.maxItems === null ? records.slice() : records.slice(-this.maxItems);
  }

  writeback(ctx: RunContext): void {
    const input = ctx.inputText;
    const toolResults = ctx.toolResults.map((entry) => ({ toolId: entry.toolId, result: entry.result }));
    const output = ctx.scratch.finalOutput;
    // Made whole at once: a field added afterwards moves to a side table the session keeps as long as it lives.
    const record: BufferMemoryRecord =
      output === undefined ? { input, toolResults } : { input, toolResults, output };
    const records = ctx.state[this.stateKey];
    if (!Array.isArray(records)) {
      // Made holding the record: an empty array pushed to grows room for seventeen.
      ctx.state[this.stateKey] = [record];
      return;
    }
    const list = records as BufferMemoryRecord[];
    // Appended and trimmed in place: the state array is the persisted one, copying it would cost a whole
    // history per run.
    list.push(record);
    if (this.maxItems !== null && list.length > this.maxItems) list.splice(0, list.length - this.maxItems);
  }

  retrieve(query: string, ctx: RunContext): Record<string, unknown>[] {
    const needle = query.toLowerCase();
    const records = this.records(ctx);
    const found: Record<string, unknown>[] = [];
    for (let index = records.length - 1; index >= 0; index--) {
      const record = records[index]!;
      if (searchableText(record.input).includes(needle) || searchableText(record.output).includes(needle)) {
        found.push(record as unknown as Record<string, unknown>);
      }
    }
    return found;
  }

  private records(ctx: RunContext): BufferMemoryRecord[] {
    const records = ctx.state[this.stateKey];
    return Array.isArray(records) ? (records as BufferMemoryRecord[]) : [];
  }
}

function searchableText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value.toLowerCase();
  try {
    return (JSON.stringify(value) ?? "").toLowerCase();
  } catch {
    // Cyclic or otherwise unserialisable outputs are simply not searchable.
    return "";
  }
}
