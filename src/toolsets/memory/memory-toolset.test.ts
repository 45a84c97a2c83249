import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { registerBuiltins } from "../../builtins/register-builtins.js";
import type { RunArtifact } from "../../contracts/run-types.js";
import type { Tool, ToolContext, ToolResult } from "../../contracts/tool.js";
import type { MemoryEntry, MemoryHit, MemoryStore, RetrievingMemory } from "../../memory/memory-store.js";
import { rankByTokenOverlap } from "../../memory/rank-by-token-overlap.js";
import { SESSION_MEMORY_STATE_KEY, SessionMemoryStore } from "../../memory/session-memory-store.js";
import { loadPlugin } from "../../plugins/load-plugin.js";
import { RunFolder } from "../../run-folders/run-folder.js";
import { Runtime } from "../../runtime/runtime.js";
import { scriptedModel } from "../../testing/index.js";
import type { Toolset } from "../../tools/toolset.js";
import {
  createMemoryToolset,
  MEMORY_CANDIDATE_KIND,
  MEMORY_CANDIDATES_FILE,
  type MemoryToolsetOptions,
  memoryWriteModeOf,
} from "./memory-toolset.js";

/** The memory toolset and its providers, called without a model, and in a run. */

const base = mkdtempSync(path.join(tmpdir(), "keel-memory-tools-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function context(runId = "r1", state: Record<string, unknown> = {}, sessionArtifacts: RunArtifact[] = []) {
  return {
    sessionId: "s1",
    runId,
    toolCallId: "c1",
    state,
    session: { id: "s1", state },
    artifacts: [] as RunArtifact[],
    sessionArtifacts,
  } as unknown as ToolContext;
}

function byName(toolset: Toolset): Record<string, Tool> {
  return Object.fromEntries(toolset.tools().map((tool) => [tool.name, tool]));
}

function tools(options: MemoryToolsetOptions = {}, ctx = context()) {
  const all = byName(createMemoryToolset(options));
  const call = async <T>(name: string, params: Record<string, unknown>) =>
    (await all[name]!.invoke(params, ctx)) as ToolResult<T>;
  return { call, ctx, all };
}

type Recall = { results: MemoryHit[] };

describe("write modes", () => {
  it("candidate is the default: a write becomes a run artifact of kind memory_candidate, recall finds it", async () => {
    const { call, ctx } = tools();
    const written = await call<{ id: string; mode: string }>("write_memory", {
      content: "The user prefers metric units",
      tags: ["units"],
    });
    expect(written).toMatchObject({ ok: true, data: { mode: "candidate" } });
    expect(ctx.artifacts).toHaveLength(1);
    expect(ctx.artifacts[0]).toMatchObject({
      kind: MEMORY_CANDIDATE_KIND,
      name: `memory_candidate:${written.data!.id}`,
      payload: {
        id: written.data!.id,
        content: "The user prefers metric units",
        scope: "default",
        tags: ["units"],
        runId: "r1",
      },
    });
    expect(ctx.session.state[SESSION_MEMORY_STATE_KEY]).toBeUndefined();
    const recalled = await call<Recall>("recall_memory", { query: "which units?" });
    expect(recalled.data!.results).toMatchObject([{ id: written.data!.id, source: "candidate", score: 0.5 }]);
  });

  it("candidate recall also searches earlier runs' candidates among the session artifacts", async () => {
    const earlier: RunArtifact = {
      name: "memory_candidate:old",
      kind: MEMORY_CANDIDATE_KIND,
      payload: {
        id: "old",
        content: "deploys happen on friday",
        scope: "ops",
        tags: [],
        createdAt: "2026-01-01",
      },
      metadata: {},
    };
    const { call } = tools({}, context("r2", {}, [earlier]));
    const recalled = await call<Recall>("recall_memory", { query: "friday deploys", scope: "ops" });
    expect(recalled.data!.results.map((hit) => hit.id)).toEqual(["old"]);
    expect((await call<Recall>("recall_memory", { query: "friday", scope: "other" })).data!.results).toEqual(
      [],
    );
  });

  it("candidate with a run folder: each write is also a line of archive/memory-candidates.jsonl", async () => {
    const folder = new RunFolder(base, "r-cand").open();
    const ctx = Object.assign(context("r-cand"), { runFolder: folder }) as ToolContext;
    const { call } = tools({}, ctx);
    const first = await call<{ id: string }>("write_memory", { content: "one", scope: "a", tags: ["t"] });
    await call("write_memory", { content: "two" });
    const lines = readFileSync(path.join(folder.archiveDir, MEMORY_CANDIDATES_FILE), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toMatchObject([
      { id: first.data!.id, content: "one", scope: "a", tags: ["t"], runId: "r-cand" },
      { content: "two", scope: "default", tags: [], runId: "r-cand" },
    ]);
    for (const line of lines) expect(Number.isNaN(Date.parse(line.createdAt))).toBe(false);
  });

  it("disabled: write_memory is not offered; recall still works; the tools carry the mode", async () => {
    const { all, call } = tools({ writeMode: "disabled" });
    expect(Object.keys(all)).toEqual(["recall_memory"]);
    expect((await call<Recall>("recall_memory", { query: "x" })).ok).toBe(true);
    expect(memoryWriteModeOf(Object.values(all))).toBe("disabled");
    expect(memoryWriteModeOf(Object.values(tools().all))).toBe("candidate");
    expect(memoryWriteModeOf([])).toBeUndefined();
  });

  it("external needs a store with write: none is a config error naming the way out", () => {
    expect(() => createMemoryToolset({ writeMode: "external" })).toThrow(/needs a memory store with write/);
    const retrieveOnly: RetrievingMemory = { retrieve: () => [] };
    expect(() => createMemoryToolset({ writeMode: "external", store: retrieveOnly })).toThrow(
      /needs a memory store with write/,
    );
  });

  it("external with the session store: entries in the session state, recalled", async () => {
    const { call, ctx } = tools({ writeMode: "external", store: new SessionMemoryStore() });
    const written = await call<{ id: string }>("write_memory", {
      content: "Alice likes tea",
      scope: "people",
    });
    expect(ctx.artifacts).toEqual([]);
    expect(ctx.session.state[SESSION_MEMORY_STATE_KEY]).toMatchObject([
      { id: written.data!.id, content: "Alice likes tea", scope: "people", tags: [] },
    ]);
    const recalled = await call<Recall>("recall_memory", { query: "what does alice like", scope: "people" });
    expect(recalled.data!.results).toMatchObject([{ id: written.data!.id, source: "store" }]);
  });

  it("external with a custom store object: write and recall go through it with the tool context", async () => {
    const calls: unknown[] = [];
    const store: MemoryStore = {
      write: async (input, ctx) => {
        calls.push(["write", input, ctx.runId]);
        return { id: "ext-1" };
      },
      recall: (input) => {
        calls.push(["recall", input]);
        return [{ id: "ext-1", content: "c", scope: "s", tags: [], createdAt: "", score: 0.9 }];
      },
    };
    const { call } = tools({ writeMode: "external", store });
    const written = await call<{ id: string }>("write_memory", { content: "c", scope: "s", tags: ["t"] });
    expect(written.data!.id).toBe("ext-1");
    const recalled = await call<Recall>("recall_memory", { query: "c", limit: 3 });
    expect(recalled.data!.results).toMatchObject([{ id: "ext-1", source: "store" }]);
    expect(calls).toEqual([
      ["write", { content: "c", scope: "s", tags: ["t"] }, "r1"],
      ["recall", { query: "c", limit: 3 }],
    ]);
  });

  it("a store without recall is recalled through retrieve: its order kept, filtered by scope, bounded", async () => {
    const queries: string[] = [];
    const store: MemoryStore & RetrievingMemory = {
      write: () => ({ id: "w" }),
      retrieve: (query) => {
        queries.push(query);
        return [
          { id: "m1", memory: "tea at five", created_at: "2026-01-01" },
          { content: "coffee", scope: "drinks", tags: ["hot", 3] },
          { input: "hello", output: "hi" },
        ];
      },
    };
    const { call } = tools({ writeMode: "external", store });
    const all = (await call<Recall>("recall_memory", { query: "drinks" })).data!.results;
    expect(queries).toEqual(["drinks"]);
    expect(all).toEqual([
      {
        id: "m1",
        content: "tea at five",
        scope: "default",
        tags: [],
        createdAt: "2026-01-01",
        score: 1,
        source: "retrieve",
      },
      {
        id: "retrieved_2",
        content: "coffee",
        scope: "drinks",
        tags: ["hot"],
        createdAt: "",
        score: 2 / 3,
        source: "retrieve",
      },
      {
        id: "retrieved_3",
        content: '{"input":"hello","output":"hi"}',
        scope: "default",
        tags: [],
        createdAt: "",
        score: 1 / 3,
        source: "retrieve",
      },
    ]);
    const scoped = (await call<Recall>("recall_memory", { query: "x", scope: "drinks" })).data!.results;
    expect(scoped.map((hit) => hit.content)).toEqual(["coffee"]);
    expect((await call<Recall>("recall_memory", { query: "x", limit: 1 })).data!.results).toHaveLength(1);
  });

  it("a store that can neither recall nor retrieve is a config error; a recall that returns no list a tool error", async () => {
    expect(() => createMemoryToolset({ store: {} as MemoryStore })).toThrow(
      /recall\(input, ctx\) or retrieve/,
    );
    const broken = { write: () => ({ id: "x" }), recall: () => "nope" } as unknown as MemoryStore;
    const { call } = tools({ writeMode: "external", store: broken });
    await expect(call("recall_memory", { query: "x" })).rejects.toMatchObject({
      code: "tool.error",
      message: expect.stringContaining("returned no array"),
    });
  });

  it("limit is validated against max_limit", async () => {
    const { all, ctx } = tools({ maxLimit: 3 });
    const outcome = await all.recall_memory!.validateParams!({ query: "x", limit: 4 });
    expect(outcome.ok).toBe(false);
    void ctx;
  });
});

describe("session_store ranking and limits", () => {
  const entry = (id: string, content: string, createdAt: string) =>
    ({ id, content, scope: "default", tags: [], createdAt }) as MemoryEntry;

  it("ranks by the share of query tokens matched, ties to the newer entry, skips non-matches", () => {
    const hits = rankByTokenOverlap(
      [
        entry("a", "the cat sat", "2026-01-01"),
        entry("b", "The CAT sat on the mat", "2026-01-02"),
        entry("c", "dogs bark", "2026-01-03"),
        { ...entry("d", "a mat", "2026-01-04"), tags: ["cat"] },
      ],
      "cat mat",
      { limit: 10 },
    );
    expect(hits.map((hit) => [hit.id, hit.score])).toEqual([
      ["d", 1],
      ["b", 1],
      ["a", 0.5],
    ]);
    expect(rankByTokenOverlap([entry("a", "x", "")], "  ?! ", { limit: 5 })).toEqual([]);
  });

  it("bounds results by limit and entries by max_entries (oldest dropped)", async () => {
    const store = new SessionMemoryStore({ maxEntries: 3 });
    const ctx = context();
    for (let index = 0; index < 5; index += 1)
      store.write({ content: `note ${index}`, scope: "n", tags: [] }, ctx);
    const kept = store.entries(ctx.session.state);
    expect(kept.map((item) => item.content)).toEqual(["note 2", "note 3", "note 4"]);
    expect(store.recall({ query: "note", limit: 2 }, ctx)).toHaveLength(2);
    expect(() => new SessionMemoryStore({ maxEntries: 0 })).toThrow(TypeError);
  });
});

describe("from config", () => {
  registerBuiltins();
  const load = (config: Record<string, unknown>) =>
    loadPlugin<Toolset>("tool", { type: "memory", config }, { baseDir: base });

  it("offers recall_memory and write_memory; memory_tools is the same toolset", async () => {
    expect(Object.keys(byName(await load({})))).toEqual(["recall_memory", "write_memory"]);
    const aliased = await loadPlugin<Toolset>("tool", { type: "memory_tools" }, { baseDir: base });
    expect(aliased.tools()).toHaveLength(2);
  });

  it("loads a provider module by impl, and refuses an unknown provider", async () => {
    writeFileSync(
      path.join(base, "provider.mjs"),
      "export const provider = { write: () => ({ id: 'm1' }), recall: () => [] };\n",
    );
    const toolset = await load({ write_mode: "external", provider: { impl: "./provider.mjs#provider" } });
    const written = (await byName(toolset).write_memory!.invoke({ content: "x" }, context())) as ToolResult<{
      id: string;
    }>;
    expect(written.data!.id).toBe("m1");
    await expect(load({ write_mode: "external", provider: "redis" })).rejects.toThrow(
      /unknown memory provider/,
    );
    await expect(load({ write_mode: "sometimes" })).rejects.toThrow();
  });

  it("external without a provider writes through the agent's memory plugin, which must have write", async () => {
    const written: unknown[] = [];
    const memory = {
      inject: () => {},
      writeback: () => {},
      retrieve: () => [],
      write: (input: unknown) => {
        written.push(input);
        return { id: "plugin-1" };
      },
    };
    const withPlugin = await loadPlugin<Toolset>(
      "tool",
      { type: "memory", config: { write_mode: "external" } },
      { baseDir: base, agent: { id: "a", memory } },
    );
    const result = (await byName(withPlugin).write_memory!.invoke(
      { content: "x" },
      context(),
    )) as ToolResult<{
      id: string;
    }>;
    expect(result.data!.id).toBe("plugin-1");
    expect(written).toEqual([{ content: "x", scope: "default", tags: [] }]);

    class BufferLike {
      inject() {}
      writeback() {}
      retrieve() {
        return [];
      }
    }
    const refused = loadPlugin(
      "tool",
      { type: "memory", config: { write_mode: "external" } },
      { baseDir: base, agent: { id: "a", memory: new BufferLike() } },
    );
    await expect(refused).rejects.toThrow(/memory plugin \(BufferLike\) has no MemoryStore ability/);
    await expect(refused).rejects.toMatchObject({
      hint: expect.stringContaining('"provider": "session_store"'),
    });
  });
});

describe("in a ReAct run", () => {
  it("writes then recalls through the session_store, and the memory survives into the next run", async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          {
            id: "w",
            name: "write_memory",
            arguments: { content: "Project codename is Bluebird", tags: ["project"] },
          },
        ],
      },
      { toolCalls: [{ id: "r", name: "recall_memory", arguments: { query: "project codename" } }] },
      { text: "Bluebird" },
      { toolCalls: [{ id: "r2", name: "recall_memory", arguments: { query: "codename" } }] },
      { text: "still Bluebird" },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          tools: [
            { id: "mem", type: "memory", config: { write_mode: "external", provider: "session_store" } },
          ],
        },
      ],
    });
    try {
      const first = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "remember" });
      expect(first.stopReason).toBe("completed");
      const recalled = JSON.parse(model.requests[2]!.messages.at(-1)!.content as string);
      expect(recalled.data.results[0]).toMatchObject({ content: "Project codename is Bluebird", score: 1 });
      const second = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "again" });
      expect(second.finalOutput).toBe("still Bluebird");
      const again = JSON.parse(model.requests[4]!.messages.at(-1)!.content as string);
      expect(again.data.results[0].content).toBe("Project codename is Bluebird");
    } finally {
      await runtime.close();
    }
  });

  it("external through the agent's own memory plugin: its write and its retrieve serve the tools", async () => {
    const file = path.join(base, "store-memory.mjs");
    writeFileSync(
      file,
      [
        "export const remembered = [];",
        "export const memory = {",
        "  inject() {}, writeback() {},",
        "  retrieve: (query) => remembered.filter((c) => c.includes(query)).map((content) => ({ content })),",
        '  write: (input) => { remembered.push(input.content); return { id: "m" + remembered.length }; },',
        "};",
      ].join("\n"),
    );
    const { remembered } = (await import(pathToFileURL(file).href)) as { remembered: string[] };
    const model = scriptedModel([
      { toolCalls: [{ id: "w", name: "write_memory", arguments: { content: "blue is the colour" } }] },
      { toolCalls: [{ id: "r", name: "recall_memory", arguments: { query: "colour" } }] },
      { text: "blue" },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: model,
          memory: { impl: `${file}#memory` },
          tools: [{ id: "mem", type: "memory", config: { write_mode: "external" } }],
        },
      ],
    });
    try {
      const modes: unknown[] = [];
      runtime.eventBus.subscribe("memory.write_mode", (event) => {
        modes.push(event.payload.mode);
      });
      expect((await runtime.runDetailed({ agentId: "a", inputText: "go" })).stopReason).toBe("completed");
      expect(remembered).toEqual(["blue is the colour"]);
      expect(modes).toEqual(["external"]);
      const recalled = JSON.parse(model.requests[2]!.messages.at(-1)!.content as string);
      expect(recalled.data.results).toMatchObject([{ content: "blue is the colour", source: "retrieve" }]);
    } finally {
      await runtime.close();
    }
  });

  it("candidate mode: the write is a run artifact of the result; disabled mode: write_memory is no tool", async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: "w", name: "write_memory", arguments: { content: "likes jazz" } }] },
      { toolCalls: [{ id: "r", name: "recall_memory", arguments: { query: "jazz" } }] },
      { text: "ok" },
    ]);
    const runtime = await Runtime.fromDict({
      agents: [{ id: "a", name: "A", llm: model, tools: [{ id: "mem", type: "memory" }] }],
    });
    try {
      const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
      expect(result.artifacts.filter((artifact) => artifact.kind === MEMORY_CANDIDATE_KIND)).toMatchObject([
        { payload: { content: "likes jazz", runId: result.runId } },
      ]);
      const recalled = JSON.parse(model.requests[2]!.messages.at(-1)!.content as string);
      expect(recalled.data.results[0]).toMatchObject({ content: "likes jazz", source: "candidate" });
    } finally {
      await runtime.close();
    }

    const refused = scriptedModel([
      { toolCalls: [{ id: "w", name: "write_memory", arguments: { content: "x" } }] },
      { text: "ok" },
    ]);
    const off = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: refused,
          tools: [{ id: "mem", type: "memory", config: { write_mode: "disabled" } }],
        },
      ],
    });
    try {
      const modes: unknown[] = [];
      off.eventBus.subscribe("memory.write_mode", (event) => {
        modes.push(event.payload.mode);
      });
      await off.runDetailed({ agentId: "a", inputText: "go" });
      expect(modes).toEqual(["disabled"]);
      expect(refused.requests[0]!.tools?.map((tool) => tool.name)).toEqual(["recall_memory"]);
      const seen = refused.requests[1]!.messages.at(-1)!.content as string;
      expect(seen).toContain("write_memory");
      expect(JSON.parse(seen).error.code).toBe("tool.not_found");
    } finally {
      await off.close();
    }
  });
});
