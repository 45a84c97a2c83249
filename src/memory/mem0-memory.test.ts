import { afterEach, describe, expect, it, vi } from "vitest";
import type { RunContext } from "../contracts/tool.js";
import { PluginConfigError, PluginLoadError } from "../errors/error-classes.js";
import { type Mem0Client, Mem0Memory, mem0MemoryConfigSchema } from "./mem0-memory.js";

function fakeClient(searchResponse: unknown): Mem0Client & { calls: unknown[][] } {
  const calls: unknown[][] = [];
  return {
    calls,
    add: async (messages, options) => {
      calls.push(["add", messages, options]);
      return [];
    },
    search: async (query, options) => {
      calls.push(["search", query, options]);
      return searchResponse;
    },
  };
}

function makeContext(inputText: string, finalOutput?: unknown): RunContext {
  return {
    sessionId: "s1",
    agentId: "agent",
    runId: "r1",
    inputText,
    scratch: finalOutput === undefined ? {} : { finalOutput },
    memoryView: {},
  } as unknown as RunContext;
}

describe("Mem0Memory", () => {
  it("fails construction with a PluginLoadError and an install hint when mem0ai is missing", async () => {
    const error = await Mem0Memory.create(mem0MemoryConfigSchema().parse({})).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(PluginLoadError);
    expect((error as PluginLoadError).code).toBe("plugin.load");
    expect((error as PluginLoadError).hint).toBe("npm install mem0ai");
    expect((error as PluginLoadError).message).toContain("mem0ai");
  });

  describe("with a stand-in for the mem0ai module", () => {
    afterEach(() => {
      vi.unstubAllEnvs();
    });

    const config = mem0MemoryConfigSchema().parse({ api_key_env: "KEEL_TEST_MEM0_KEY", search_limit: 2 });

    it("builds the module's default-exported client with the key from api_key_env", async () => {
      vi.stubEnv("KEEL_TEST_MEM0_KEY", "m0-secret");
      const constructed: unknown[] = [];
      class FakeClient {
        constructor(options: unknown) {
          constructed.push(options);
        }
        add = async () => [];
        search = async () => [];
      }
      const memory = await Mem0Memory.create(config, async () => ({ default: FakeClient }));
      expect(constructed).toEqual([{ apiKey: "m0-secret" }]);
      expect(memory.client).toBeInstanceOf(FakeClient);
      expect([memory.collectionName, memory.searchLimit, memory.viewKey]).toEqual([
        "keel_memory",
        2,
        "memories",
      ]);
      const nested = await Mem0Memory.create(config, async () => ({ default: { default: FakeClient } }));
      expect(nested.client).toBeInstanceOf(FakeClient);
    });

    it("refuses a module without a client class and a missing API key", async () => {
      vi.stubEnv("KEEL_TEST_MEM0_KEY", "m0-secret");
      await expect(Mem0Memory.create(config, async () => ({ other: 1 }))).rejects.toBeInstanceOf(
        PluginLoadError,
      );
      vi.stubEnv("KEEL_TEST_MEM0_KEY", "");
      const error = await Mem0Memory.create(config, async () => ({ MemoryClient: class {} })).catch(
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(PluginConfigError);
      expect((error as PluginConfigError).message).toBe(
        'memory "mem0": the environment variable KEEL_TEST_MEM0_KEY is not set',
      );
    });
  });

  it("has the documented config defaults", () => {
    expect(mem0MemoryConfigSchema().parse({})).toEqual({
      collection_name: "keel_memory",
      search_limit: 5,
      api_key_env: "MEM0_API_KEY",
      view_key: "memories",
    });
  });

  it("injects the memories mem0 finds for the input", async () => {
    const client = fakeClient({ results: [{ id: "m1", memory: "likes tea" }, "junk"] });
    const memory = new Mem0Memory({ client, collectionName: "c", searchLimit: 3 });
    const ctx = makeContext("drinks?");
    await memory.inject(ctx);
    expect(ctx.memoryView).toEqual({ memories: [{ id: "m1", memory: "likes tea" }] });
    expect(client.calls).toEqual([["search", "drinks?", { user_id: "c", limit: 3 }]]);
  });

  it("accepts a plain list from older clients and anything else as no result", async () => {
    expect(
      await new Mem0Memory({ client: fakeClient([{ id: "a" }]) }).retrieve("q", makeContext("")),
    ).toEqual([{ id: "a" }]);
    expect(await new Mem0Memory({ client: fakeClient(null) }).retrieve("q", makeContext(""))).toEqual([]);
  });

  it("injects an empty list without searching when the input is empty", async () => {
    const client = fakeClient([]);
    const ctx = makeContext("");
    await new Mem0Memory({ client }).inject(ctx);
    expect(ctx.memoryView).toEqual({ memories: [] });
    expect(client.calls).toEqual([]);
  });

  it("writes the exchange back with the session, agent and run as metadata", async () => {
    const client = fakeClient([]);
    const memory = new Mem0Memory({ client });
    await memory.writeback(makeContext("I like tea", { answer: "noted" }));
    await memory.writeback(makeContext(""));
    expect(client.calls).toEqual([
      [
        "add",
        [
          { role: "user", content: "I like tea" },
          { role: "assistant", content: '{"answer":"noted"}' },
        ],
        { user_id: "keel_memory", metadata: { sessionId: "s1", agentId: "agent", runId: "r1" } },
      ],
    ]);
  });
});
