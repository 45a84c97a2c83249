import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, Runtime } from "../src/index.js";
import type { RunState } from "../src/loop/run-state.js";
import { scriptedModel } from "../src/testing/index.js";

/**
 * A durable run as Keel 1 left it in a `jsonl_file` store when its process died mid-step: six checkpoints
 * (run state schema version 1), the run transcript and the event log. The files were written once by a real run
 * and are never regenerated: if a change to the run state, the checkpoint or the store stops resuming them,
 * runs users already have stop resuming too, and this test fails.
 */
const fixtures = join(import.meta.dirname, "fixtures", "checkpoints");
const rootDir = mkdtempSync(join(tmpdir(), "keel-checkpoint-fixtures-"));
afterAll(() => rmSync(rootDir, { recursive: true, force: true }));
mkdirSync(join(rootDir, "sessions"));
mkdirSync(join(rootDir, "runs"));
copyFileSync(join(fixtures, "durable-session.jsonl"), join(rootDir, "sessions", "durable-session.jsonl"));
copyFileSync(join(fixtures, "durable-1.jsonl"), join(rootDir, "runs", "durable-1.jsonl"));

/** The agent that wrote the fixture: same tool names and schemas, pattern and model id. */
async function calculator(calls: string[]) {
  const add = defineTool({
    name: "add",
    description: "Add two numbers",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }, ctx) => {
      calls.push(`${ctx.toolCallId}:add`);
      return a + b;
    },
  });
  const record = defineTool({
    name: "record",
    description: "Record a value",
    inputSchema: z.object({ value: z.string() }),
    durableIdempotent: false,
    execute: ({ value }, ctx) => {
      calls.push(`${ctx.toolCallId}:record`);
      return `recorded ${value}`;
    },
  });
  // The whole script the run was written with; a resumed run's model answers after the turns its transcript holds.
  const model = scriptedModel([
    { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
    {
      text: "recording",
      toolCalls: [
        { id: "c2", name: "record", arguments: { value: "x" } },
        { id: "c3", name: "add", arguments: { a: 3, b: 4 } },
      ],
    },
    { text: "1 + 2 = 3, recorded x, 3 + 4 = 7" },
  ]);
  const runtime = await Runtime.fromDict({
    session: { type: "jsonl_file", config: { root_dir: rootDir } },
    agents: [
      {
        id: "calculator",
        name: "Calculator",
        instructions: "Add numbers.",
        tools: [add, record],
        llm: model,
      },
    ],
  });
  return { runtime, model };
}

describe("frozen checkpoint fixtures (run state schema version 1)", () => {
  it("reads the checkpoints and the state of a step in flight", async () => {
    const { runtime } = await calculator([]);
    expect(await runtime.listRunCheckpoints("durable-1")).toEqual([
      "durable-1:step:1",
      "durable-1:step:2",
      "durable-1:step:3",
      "durable-1:step:4",
      "durable-1:step:5",
      "durable-1:step:6",
    ]);
    const checkpoint = await runtime.sessionManager.loadCheckpoint("durable-session", "durable-1:step:6");
    const state = checkpoint!.state as unknown as RunState;
    expect(checkpoint).toMatchObject({ schemaVersion: 1, transcriptLength: 4, artifactCount: 0 });
    expect(state).toMatchObject({
      schemaVersion: 1,
      phase: "tools",
      step: 2,
      durable: true,
      idempotencyWarned: ["record"],
    });
    expect(state.toolCalls).toEqual([
      { id: "c2", toolId: "record", params: { value: "x" }, status: "succeeded", result: "recorded x" },
      { id: "c3", toolId: "add", params: { a: 3, b: 4 }, status: "new" },
    ]);
    await runtime.close();
  });

  it("resumes the run to the end: the finished calls are not run again", async () => {
    const calls: string[] = [];
    const { runtime, model } = await calculator(calls);
    const before = readFileSync(join(fixtures, "durable-1.jsonl"), "utf8");
    const result = await runtime.resumeRun("durable-1");
    expect(result).toMatchObject({
      runId: "durable-1",
      stopReason: "completed",
      finalOutput: "1 + 2 = 3, recorded x, 3 + 4 = 7",
    });
    expect(calls).toEqual(["c3:add"]);
    expect(result.usage).toMatchObject({ llmCalls: 3, toolCalls: 3, inputTokens: 30 });
    // The fixture's breakdown says cached_read and cached_write, as checkpoints did before; the result's is camelCase.
    expect(result.usage.costBreakdown).toEqual({ input: 0, output: 0, cachedRead: 0, cachedWrite: 0 });
    expect(model.requests[0]!.messages).toEqual([
      { role: "user", content: "Add 1 and 2, record x, then add 3 and 4" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 2 } }] },
      { role: "tool", toolCallId: "c1", toolName: "add", content: "3" },
      {
        role: "assistant",
        content: "recording",
        toolCalls: [
          { id: "c2", name: "record", arguments: { value: "x" } },
          { id: "c3", name: "add", arguments: { a: 3, b: 4 } },
        ],
      },
      { role: "tool", toolCallId: "c2", toolName: "record", content: "recorded x" },
      { role: "tool", toolCallId: "c3", toolName: "add", content: "7" },
    ]);
    const events = await runtime.sessionManager.loadEvents("durable-1");
    expect(events.map((event) => event.sequence)).toEqual(events.map((_, index) => index + 1));
    expect(await runtime.getRun("durable-1")).toMatchObject({ status: "done", stopReason: "completed" });
    // The fixture itself is only ever read.
    expect(readFileSync(join(fixtures, "durable-1.jsonl"), "utf8")).toBe(before);
    await runtime.close();
  });
});
