import { z } from "zod";
import { builtOnFirstUse } from "../util/built-on-first-use.js";
import { BufferMemory } from "./buffer-memory.js";

/** The config of the `window_buffer` memory. */
export const windowBufferMemoryConfigSchema = builtOnFirstUse(() =>
  z.object({
    state_key: z.string().min(1).default("memory_buffer"),
    view_key: z.string().min(1).default("history"),
    window_size: z.number().int().min(1).default(20),
  }),
);

/** Options of {@link WindowBufferMemory}. */
export interface WindowBufferMemoryOptions {
  stateKey?: string;
  viewKey?: string;
  /** How many newest records are kept and injected (default 20). */
  windowSize?: number;
}

/** A {@link BufferMemory} that keeps only the newest `windowSize` records. */
export class WindowBufferMemory extends BufferMemory {
  readonly windowSize: number;

  constructor(options: WindowBufferMemoryOptions = {}) {
    const windowSize = options.windowSize ?? 20;
    super({ stateKey: options.stateKey, viewKey: options.viewKey, maxItems: windowSize });
    this.windowSize = windowSize;
  }
}
