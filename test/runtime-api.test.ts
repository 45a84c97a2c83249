import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  PluginLoadError,
  RunNotCompletedError,
  Runtime,
  runAgent,
  runAgentDetailed,
  streamAgent,
} from "../src/index.js";
import { collect, runtimeWith } from "./support/harness.js";

async function writeConfig(config: unknown): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "keel-runtime-"));
  const file = path.join(dir, "agent.json");
  await writeFile(file, JSON.stringify(config));
  return file;
}

describe("the Runtime facade", () => {
  it("runs the offline default: the mock echoes and calls tools by /tool", async () => {
    const runtime = await Runtime.fromDict({ agents: [{ id: "echo", name: "Echo" }] });
    expect(await runtime.run({ agentId: "echo", sessionId: "s1", inputText: "hello" })).toBe(
      "Echo: hello (history=0)",
    );
    expect(await runtime.run({ agentId: "echo", sessionId: "s1", inputText: "again" })).toBe(
      "Echo: again (history=2)",
    );
    expect(runtime.activeSessionCount()).toBe(1);
    expect(await runtime.sessionManager.loadMessages("s1")).toHaveLength(4);
    await runtime.close();
  });

  it("lists agents and describes one", async () => {
    const { runtime } = await runtimeWith([{ text: "x" }]);
    expect(runtime.listAgents()).toEqual([{ id: "a", name: "Agent A" }]);
    expect(runtime.getAgentInfo("nope")).toBeNull();
    expect(runtime.getAgentInfo("a")).toMatchObject({
      selectors: { memory: { type: "buffer" }, pattern: { type: "react" }, tools: ["add"] },
      loaded: false,
    });
    await runtime.run({ agentId: "a", inputText: "go" });
    expect(runtime.getAgentInfo("a")?.loaded).toBe(true);
    await runtime.invalidateAgent("a");
    expect(runtime.getAgentInfo("a")?.loaded).toBe(false);
    await runtime.close();
  });

  it("refuses an unknown agent with a near match", async () => {
    const { runtime } = await runtimeWith([]);
    const error = await runtime
      .runDetailed({ agentId: "aa", inputText: "go" })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe("Unknown agent id: 'aa'");
    expect((error as ConfigError).hint).toBe("Did you mean 'a'? Available agent ids: a");
    await runtime.close();
  });

  it("run() rejects with the run's error, or RunNotCompletedError carrying the result", async () => {
    const { runtime } = await runtimeWith([{ error: { type: "connection", message: "socket hang up" } }]);
    await expect(runtime.run({ agentId: "a", inputText: "go" })).rejects.toMatchObject({
      code: "llm.connection",
      message: "socket hang up",
    });
    await runtime.close();
    const suspended = await runtimeWith([{ toolCalls: [{ name: "add", arguments: { a: 1, b: 2 } }] }], {
      hooks: [{ toolGate: () => ({ action: "suspend" as const }) }],
    });
    const error = await suspended.runtime
      .run({ agentId: "a", inputText: "go" })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RunNotCompletedError);
    expect((error as RunNotCompletedError).result).toMatchObject({ stopReason: "suspended" });
    await suspended.runtime.close();
  });

  it("records runs and their events in the session store", async () => {
    const { runtime } = await runtimeWith([{ text: "hi" }]);
    const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
    const record = await runtime.getRun(result.runId);
    expect(record).toMatchObject({ status: "done", stopReason: "completed", sessionId: "s", agentId: "a" });
    expect(record!.lastSequence).toBeGreaterThan(3);
    expect((await runtime.listRuns({ sessionId: "s" })).map((run) => run.runId)).toEqual([result.runId]);
    expect(await runtime.listRuns({ status: "waiting" })).toEqual([]);
    const events = await runtime.sessionManager.loadEvents(result.runId);
    expect(events.map((event) => event.sequence)).toEqual(events.map((_event, index) => index + 1));
    await expect(collect(runtime.attach("missing"))).rejects.toMatchObject({
      code: "run.unknown",
      message: "Unknown run 'missing'",
    });
    await runtime.close();
  });

  it("reports a broken plugin ref as a typed error with a hint", async () => {
    const runtime = await Runtime.fromDict({ agents: [{ id: "a", name: "A", memory: { type: "bufer" } }] });
    const error = await runtime
      .runDetailed({ agentId: "a", inputText: "x" })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PluginLoadError);
    expect((error as PluginLoadError).hint).toMatch(/^Did you mean "buffer"\?/);
    await runtime.close();
    const missing = await Runtime.fromDict({
      agents: [{ id: "a", name: "A", tools: [{ id: "t", impl: "./nowhere.mjs#tool" }] }],
    });
    const importError = await missing
      .runDetailed({ agentId: "a", inputText: "x" })
      .catch((thrown: unknown) => thrown);
    expect(importError).toBeInstanceOf(PluginLoadError);
    expect((importError as PluginLoadError).hint).toContain(
      "paths resolve against the config file's directory",
    );
    await missing.close();
  });

  it("fails a run whose tool preflight fails, before the loop", async () => {
    const tool = {
      name: "needs_setup",
      description: "",
      schema: () => ({ type: "object" }),
      executionSpec: () => ({ ...({} as object) }),
      invoke: () => "x",
      preflight: () => {
        throw new Error("binary not on PATH");
      },
    };
    const { runtime, model } = await runtimeWith([{ text: "never" }], { tools: [tool] });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(result.stopReason).toBe("failed");
    expect(result.error).toBe("[tool:needs_setup] binary not on PATH");
    expect(result.errorDetails?.code).toBe("tool.permanent");
    expect(chunks.find((chunk) => chunk.kind === "tool.preflight")!.payload).toMatchObject({
      result: "error",
    });
    expect(model.callCount).toBe(0);
    await runtime.close();
  });

  it("reload() re-reads agent definitions; top-level changes are refused", async () => {
    const file = await writeConfig({ agents: [{ id: "a", name: "First" }] });
    const runtime = await Runtime.fromConfig(file);
    await writeFile(
      file,
      JSON.stringify({
        agents: [
          { id: "a", name: "Second" },
          { id: "b", name: "B" },
        ],
      }),
    );
    expect(await runtime.reload()).toEqual({ changedAgents: ["a", "b"] });
    expect(runtime.listAgents()).toEqual([
      { id: "a", name: "Second" },
      { id: "b", name: "B" },
    ]);
    expect(runtime.eventBus.getHistory({ name: "config.reloaded" })[0]!.payload).toEqual({
      oldVersion: 1,
      newVersion: 2,
      changedAgents: ["a", "b"],
    });
    await writeFile(
      file,
      JSON.stringify({ agents: [{ id: "a", name: "Third" }], session: { type: "jsonl_file" } }),
    );
    await expect(runtime.reload()).rejects.toThrow(
      "Hot reload does not support changing top-level runtime/session/events",
    );
    await writeFile(
      file,
      JSON.stringify({
        agents: [
          { id: "a", name: "Fourth" },
          { id: "b", name: "B" },
        ],
      }),
    );
    await runtime.reloadAgent("a");
    expect(runtime.listAgents()[0]).toEqual({ id: "a", name: "Fourth" });
    await expect(runtime.reloadAgent("zzz")).rejects.toThrow("Unknown agent id: 'zzz'");
    await runtime.close();
    const inline = await Runtime.fromDict({ agents: [{ id: "a", name: "A" }] });
    await expect(inline.reload()).rejects.toThrow("Cannot reload: no config path available");
    await inline.close();
  });

  it("closeSession and releaseSession are safe for any session", async () => {
    const { runtime } = await runtimeWith([{ text: "x" }]);
    await runtime.run({ agentId: "a", sessionId: "s", inputText: "go" });
    await runtime.releaseSession("never-used");
    await runtime.closeSession("s");
    expect(runtime.activeSessionCount()).toBe(0);
    await runtime.close();
    await runtime.close();
  });

  it("one-call helpers create, use and close a runtime", async () => {
    const config = { agents: [{ id: "e", name: "E" }] };
    expect(await runAgent(config, { agentId: "e", inputText: "hi" })).toBe("Echo: hi (history=0)");
    expect((await runAgentDetailed(config, { agentId: "e", inputText: "hi" })).stopReason).toBe("completed");
    const file = await writeConfig(config);
    const chunks = await collect(streamAgent(file, { agentId: "e", inputText: "yo" }));
    expect(chunks.at(-1)!.result!.finalOutput).toBe("Echo: yo (history=0)");
  });

  it("serialises runs of one session and refuses a full queue", async () => {
    const { runtime } = await runtimeWith(
      [
        { text: "1", delayMs: 20 },
        { text: "2", delayMs: 1 },
      ],
      { runtime: { session_queue_size: 1 } },
    );
    const order: string[] = [];
    const first = runtime
      .runDetailed({ agentId: "a", sessionId: "q", inputText: "a" })
      .then((r) => order.push(`a:${r.finalOutput}`));
    const second = runtime
      .runDetailed({ agentId: "a", sessionId: "q", inputText: "b" })
      .then((r) => order.push(`b:${r.finalOutput}`));
    const third = await runtime.runDetailed({ agentId: "a", sessionId: "q", inputText: "c" });
    await Promise.all([first, second]);
    expect(order).toEqual(["a:1", "b:2"]);
    expect(third.stopReason).toBe("failed");
    expect(third.errorDetails?.code).toBe("session.queue_full");
    await runtime.close();
  });
});

describe("session stores named in config", () => {
  it("sqlite keeps a session's history across runtimes", async () => {
    const { mkdtemp } = await import("node:fs/promises");
    const dir = await mkdtemp(path.join(tmpdir(), "keel-sqlite-runtime-"));
    const config = {
      session: { type: "sqlite", config: { db_path: path.join(dir, "keel.db") } },
      agents: [{ id: "e", name: "E" }],
    };
    const first = await Runtime.fromDict(config);
    expect(await first.run({ agentId: "e", sessionId: "s", inputText: "one" })).toBe("Echo: one (history=0)");
    await first.close();
    const second = await Runtime.fromDict(config);
    expect(await second.run({ agentId: "e", sessionId: "s", inputText: "two" })).toBe(
      "Echo: two (history=2)",
    );
    expect((await second.listRuns({ sessionId: "s" })).map((run) => run.stopReason)).toEqual([
      "completed",
      "completed",
    ]);
    await second.close();
  });

  it("jsonl_file keeps a session's history across runtimes", async () => {
    const { mkdtemp } = await import("node:fs/promises");
    const root = await mkdtemp(path.join(tmpdir(), "keel-jsonl-runtime-"));
    const config = {
      session: { type: "jsonl_file", config: { root_dir: root } },
      agents: [{ id: "e", name: "E" }],
    };
    const first = await Runtime.fromDict(config);
    expect(await first.run({ agentId: "e", sessionId: "s", inputText: "one" })).toBe("Echo: one (history=0)");
    await first.close();
    const second = await Runtime.fromDict(config);
    expect(await second.run({ agentId: "e", sessionId: "s", inputText: "two" })).toBe(
      "Echo: two (history=2)",
    );
    expect((await second.listRuns({ sessionId: "s" })).map((run) => run.status)).toEqual(["done", "done"]);
    await second.close();
  });
});
