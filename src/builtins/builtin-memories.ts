import { BufferMemory, bufferMemoryConfigSchema } from "../memory/buffer-memory.js";
import { ChainMemory, chainMemoryConfigSchema } from "../memory/chain-memory.js";
import { MEM0_PACKAGE, Mem0Memory, mem0MemoryConfigSchema } from "../memory/mem0-memory.js";
import type { Memory } from "../memory/memory.js";
import { WindowBufferMemory, windowBufferMemoryConfigSchema } from "../memory/window-buffer-memory.js";
import { parsePluginConfig } from "../plugins/plugin-config.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";

/** Register the builtin memories `buffer`, `window_buffer`, `chain` and `mem0`; calling it again is harmless. */
export function registerMemoryBuiltins(): void {
  registerBuiltin({
    kind: "memory",
    type: "buffer",
    get configSchema() {
      return bufferMemoryConfigSchema();
    },
    create(config) {
      const parsed = parsePluginConfig(bufferMemoryConfigSchema(), config, {
        kind: "memory",
        type: "buffer",
      });
      return new BufferMemory({
        stateKey: parsed.state_key,
        viewKey: parsed.view_key,
        maxItems: parsed.max_items,
      });
    },
  });
  registerBuiltin({
    kind: "memory",
    type: "window_buffer",
    get configSchema() {
      return windowBufferMemoryConfigSchema();
    },
    create(config) {
      const parsed = parsePluginConfig(windowBufferMemoryConfigSchema(), config, {
        kind: "memory",
        type: "window_buffer",
      });
      return new WindowBufferMemory({
        stateKey: parsed.state_key,
        viewKey: parsed.view_key,
        windowSize: parsed.window_size,
      });
    },
  });
  registerBuiltin({
    kind: "memory",
    type: "chain",
    get configSchema() {
      return chainMemoryConfigSchema();
    },
    async create(config, context) {
      const parsed = parsePluginConfig(chainMemoryConfigSchema(), config, { kind: "memory", type: "chain" });
      const memories: Memory[] = [];
      try {
        for (const ref of parsed.memories) memories.push(await context.load<Memory>("memory", ref));
      } catch (error) {
        // Memories already built may hold connections; a half-built chain must not leak them.
        await new ChainMemory(memories).close().catch(() => {});
        throw error;
      }
      return new ChainMemory(memories);
    },
  });
  registerBuiltin({
    kind: "memory",
    type: "mem0",
    get configSchema() {
      return mem0MemoryConfigSchema();
    },
    requiresPackage: MEM0_PACKAGE,
    create(config) {
      return Mem0Memory.create(
        parsePluginConfig(mem0MemoryConfigSchema(), config, { kind: "memory", type: "mem0" }),
      );
    },
  });
}
