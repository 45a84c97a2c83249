import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadPlugin } from "../../plugins/load-plugin.js";
import { registerBuiltins } from "../../plugins/register-builtins.js";
import type { RunArtifact } from "../../runtime/run-types.js";
import { Runtime } from "../../runtime/runtime.js";
import { scriptedModel } from "../../testing/index.js";
import type { Tool, ToolContext, ToolResult } from "../../tools/tool.js";
import type { Toolset } from "../../tools/toolset.js";
import {
  type MemoryEntry,
  type MemoryHit,
  type MemoryProvider,
  rankByTokenOverlap,
  SESSION_MEMORY_STATE_KEY,
  SessionStoreMemoryProvider,
} from "./memory-provider.js";
import {
  createMemoryToolset,
  MEMORY_CANDIDATE_KIND,
  MEMORY_WRITE_DISABLED_CODE,
  type MemoryToolsetOptions,
  MemoryWriteDisabledError,
} from "./memory-toolset.js";

/** The memory toolset and its providers, called without a model (SB-7), and in a run. */

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

  it("disabled: write_memory refuses with a typed error and stores nothing; recall still works", async () => {
    const { call, ctx } = tools({ writeMode: "disabled" });
    const refusal = call("write_memory", { content: "x" });
    await expect(refusal).rejects.toBeInstanceOf(MemoryWriteDisabledError);
    await expect(refusal).rejects.toMatchObject({ code: MEMORY_WRITE_DISABLED_CODE });
    expect(ctx.artifacts).toEqual([]);
    expect((await call<Recall>("recall_memory", { query: "x" })).ok).toBe(true);
  });

  it("external without a provider uses session_store: entries in the session state, searchable", async () => {
    const { call, ctx } = tools({ writeMode: "external" });
    const written = await call<{ id: string }>("write_memory", {
      content: "Alice likes tea",
      scope: "people",
    });
    expect(ctx.artifacts).toEqual([]);
    expect(ctx.session.state[SESSION_MEMORY_STATE_KEY]).toMatchObject([
      { id: written.data!.id, content: "Alice likes tea", scope: "people", tags: [] },
    ]);
    const recalled = await call<Recall>("recall_memory", { query: "what does alice like", scope: "people" });
    expect(recalled.data!.results).toMatchObject([{ id: written.data!.id, source: "provider" }]);
  });

  it("external with a custom provider object: write and search go through it with the tool context", async () => {
    const calls: unknown[] = [];
    const provider: MemoryProvider = {
      write: async (input, ctx) => {
        calls.push(["write", input, ctx.runId]);
        return { id: "ext-1" };
      },
      search: (input) => {
        calls.push(["search", input]);
        return [{ id: "ext-1", content: "c", scope: "s", tags: [], createdAt: "", score: 0.9 }];
      },
    };
    const { call } = tools({ writeMode: "external", provider });
    const written = await call<{ id: string }>("write_memory", { content: "c", scope: "s", tags: ["t"] });
    expect(written.data!.id).toBe("ext-1");
    const recalled = await call<Recall>("recall_memory", { query: "c", limit: 3 });
    expect(recalled.data!.results).toMatchObject([{ id: "ext-1", source: "provider" }]);
    expect(calls).toEqual([
      ["write", { content: "c", scope: "s", tags: ["t"] }, "r1"],
      ["search", { query: "c", limit: 3 }],
    ]);
  });

  it("a provider without write/search is a config error", () => {
    expect(() => createMemoryToolset({ provider: {} as MemoryProvider })).toThrow(/write\(input, ctx\)/);
  });

  it("limit is validated against max_limit", async () => {
    const { all, ctx } = tools({ maxLimit: 3 });
    const outcome = await all.recall_memory!.validateParams!({ query: "x", limit: 4 });
    expect(outcome.ok).toBe(false);
    void ctx;
  });
});

describe("session_store ranking and limits", () => {
  const entry = (id: string, content: string, createdAt: string, scope = "default", tags: string[] = []) =>
    ({ id, content, scope, tags, createdAt }) as MemoryEntry;

  it("ranks by the share of query tokens matched, ties to the newer entry, skips non-matches", () => {
    const hits = rankByTokenOverlap(
      [
        entry("a", "the cat sat", "2026-01-01"),
        entry("b", "The CAT sat on the mat", "2026-01-02"),
        entry("c", "dogs bark", "2026-01-03"),
        entry("d", "a mat", "2026-01-04", "default", ["cat"]),
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
    const provider = new SessionStoreMemoryProvider({ maxEntries: 3 });
    const ctx = context();
    for (let index = 0; index < 5; index += 1)
      provider.write({ content: `note ${index}`, scope: "n", tags: [] }, ctx);
    const kept = provider.entries(ctx.session.state);
    expect(kept.map((item) => item.content)).toEqual(["note 2", "note 3", "note 4"]);
    expect(provider.search({ query: "note", limit: 2 }, ctx)).toHaveLength(2);
    expect(() => new SessionStoreMemoryProvider({ maxEntries: 0 })).toThrow(TypeError);
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
      "export const provider = { write: () => ({ id: 'm1' }), search: () => [] };\n",
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

  it("candidate mode: the write is a run artifact of the result; disabled mode: the model sees the refusal", async () => {
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
      await off.runDetailed({ agentId: "a", inputText: "go" });
      const seen = refused.requests[1]!.messages.at(-1)!.content as string;
      expect(seen).toContain("write_memory is disabled");
    } finally {
      await off.close();
    }
  });
});
