import { describe, expect, it } from "vitest";
import type { RunContext } from "../contracts/tool.js";
import { ChainMemory } from "./chain-memory.js";
import type { Memory } from "./memory.js";

function recordingMemory(name: string, log: string[], options: { failClose?: boolean } = {}): Memory {
  return {
    inject: () => {
      log.push(`${name}.inject`);
    },
    writeback: async () => {
      log.push(`${name}.writeback`);
    },
    retrieve: (query) => [{ from: name, query }],
    close: async () => {
      log.push(`${name}.close`);
      if (options.failClose) throw new Error(`${name} close failed`);
    },
  };
}

const ctx = {} as unknown as RunContext;

describe("ChainMemory", () => {
  it("injects in order and writes back in reverse order", async () => {
    const log: string[] = [];
    const chain = new ChainMemory([
      recordingMemory("a", log),
      recordingMemory("b", log),
      recordingMemory("c", log),
    ]);
    await chain.inject(ctx);
    await chain.writeback(ctx);
    expect(log).toEqual(["a.inject", "b.inject", "c.inject", "c.writeback", "b.writeback", "a.writeback"]);
  });

  it("concatenates retrieve results in order", async () => {
    const log: string[] = [];
    const chain = new ChainMemory([recordingMemory("a", log), recordingMemory("b", log)]);
    expect(await chain.retrieve("q", ctx)).toEqual([
      { from: "a", query: "q" },
      { from: "b", query: "q" },
    ]);
  });

  it("closes in reverse order, closes all even when one fails, and rethrows the first failure", async () => {
    const log: string[] = [];
    const chain = new ChainMemory([
      recordingMemory("a", log, { failClose: true }),
      { inject() {}, writeback() {}, retrieve: () => [] },
      recordingMemory("c", log, { failClose: true }),
    ]);
    await expect(chain.close()).rejects.toThrow("c close failed");
    expect(log).toEqual(["c.close", "a.close"]);
  });
});
