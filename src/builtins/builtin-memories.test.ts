import { describe, expect, it } from "vitest";
import { PluginConfigError, PluginLoadError } from "../errors/error-classes.js";
import { BufferMemory } from "../memory/buffer-memory.js";
import { ChainMemory } from "../memory/chain-memory.js";
import type { Memory } from "../memory/memory.js";
import { WindowBufferMemory } from "../memory/window-buffer-memory.js";
import { getPlugin, type PluginFactoryContext } from "../plugins/plugin-registry.js";
import { registerMemoryBuiltins } from "./builtin-memories.js";

registerMemoryBuiltins();
registerMemoryBuiltins();

function factoryContext(loaded: Memory[] = [], failAt = -1): PluginFactoryContext & { refs: unknown[] } {
  const refs: unknown[] = [];
  return {
    baseDir: "/",
    refs,
    load: async <T>(_kind: string, ref: unknown) => {
      if (refs.length === failAt) throw new Error("cannot load");
      refs.push(ref);
      return loaded[refs.length - 1] as T;
    },
  };
}

async function create(type: string, config: Record<string, unknown>, context = factoryContext()) {
  const definition = getPlugin("memory", type);
  if (!definition) throw new Error(`memory ${type} is not registered`);
  return definition.create(config, context);
}

describe("registerMemoryBuiltins", () => {
  it("registers buffer with snake_case config", async () => {
    const memory = (await create("buffer", { state_key: "k", view_key: "v", max_items: 4 })) as BufferMemory;
    expect(memory).toBeInstanceOf(BufferMemory);
    expect([memory.stateKey, memory.viewKey, memory.maxItems]).toEqual(["k", "v", 4]);
    const defaults = (await create("buffer", {})) as BufferMemory;
    expect([defaults.stateKey, defaults.viewKey, defaults.maxItems]).toEqual([
      "memory_buffer",
      "history",
      null,
    ]);
  });

  it("rejects an invalid buffer config", async () => {
    await expect(create("buffer", { max_items: 0 })).rejects.toBeInstanceOf(PluginConfigError);
  });

  it("registers window_buffer", async () => {
    const memory = (await create("window_buffer", { window_size: 7 })) as WindowBufferMemory;
    expect(memory).toBeInstanceOf(WindowBufferMemory);
    expect(memory.maxItems).toBe(7);
  });

  it("registers chain, loading each nested ref in order", async () => {
    const inner = [new BufferMemory(), new WindowBufferMemory()];
    const context = factoryContext(inner);
    const chain = (await create(
      "chain",
      { memories: [{ type: "buffer" }, { type: "window_buffer" }] },
      context,
    )) as ChainMemory;
    expect(chain).toBeInstanceOf(ChainMemory);
    expect(chain.memories).toEqual(inner);
    expect(context.refs).toEqual([{ type: "buffer" }, { type: "window_buffer" }]);
  });

  it("refuses an empty chain", async () => {
    await expect(create("chain", { memories: [] })).rejects.toBeInstanceOf(PluginConfigError);
    await expect(create("chain", {})).rejects.toBeInstanceOf(PluginConfigError);
  });

  it("closes the memories already loaded when a later chain member fails to load", async () => {
    let closed = 0;
    const first: Memory = {
      inject() {},
      writeback() {},
      retrieve: () => [],
      close: async () => void closed++,
    };
    const context = factoryContext([first], 1);
    await expect(create("chain", { memories: [{ type: "a" }, { type: "b" }] }, context)).rejects.toThrow(
      "cannot load",
    );
    expect(closed).toBe(1);
  });

  it("registers mem0 as an optional builtin that names its package", async () => {
    expect(getPlugin("memory", "mem0")?.requiresPackage).toBe("mem0ai");
    await expect(create("mem0", {})).rejects.toBeInstanceOf(PluginLoadError);
  });
});
