import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineTool, type HookContext, Runtime, type ToolCallState } from "../src/index.js";
import * as runStatus from "../src/loop/run-status.js";
import { scriptedModel } from "../src/testing/index.js";

/** Every status change of a run and of its tool calls goes through the status machine. */

vi.mock("../src/loop/run-status.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../src/loop/run-status.js")>();
  return {
    ...actual,
    transitionRun: vi.fn(actual.transitionRun),
    transitionToolCall: vi.fn(actual.transitionToolCall),
  };
});

afterEach(() => vi.clearAllMocks());

function transitions(fn: unknown): [string, string][] {
  return (fn as { mock: { calls: [string, string][] } }).mock.calls.map(([from, to]) => [from, to]);
}

async function payRuntime(seen: string[]) {
  const pay = defineTool({
    name: "pay",
    description: "Pay (needs approval)",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }) => `paid ${amount}`,
  });
  const hook = {
    toolGate: (_ctx: HookContext, call: ToolCallState) => {
      seen.push(call.status);
      return undefined;
    },
  };
  const model = scriptedModel([
    { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 5 } }] },
    { text: "paid" },
  ]);
  return Runtime.fromDict({ agents: [{ id: "a", name: "A", tools: [pay], llm: model, hooks: [hook] }] });
}

describe("status transitions", () => {
  it("a run goes created → running → waiting, then waiting → running → done, each through transitionRun", async () => {
    const runtime = await payRuntime([]);
    try {
      await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "r" });
      expect(transitions(runStatus.transitionRun)).toEqual([
        ["created", "running"],
        ["running", "waiting"],
      ]);
      vi.mocked(runStatus.transitionRun).mockClear();
      const result = await runtime.decide({
        runId: "r",
        decisions: [{ toolCallId: "p1", action: "approve" }],
      });
      expect(result.stopReason).toBe("completed");
      expect(transitions(runStatus.transitionRun)).toEqual([
        ["waiting", "running"],
        ["running", "done"],
      ]);
    } finally {
      await runtime.close();
    }
  });

  it("a call replayed after a decision goes suspended → resuming → running → succeeded", async () => {
    const seen: string[] = [];
    const runtime = await payRuntime(seen);
    try {
      await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "r" });
      expect(transitions(runStatus.transitionToolCall)).toEqual([["new", "suspended"]]);
      vi.mocked(runStatus.transitionToolCall).mockClear();
      await runtime.decide({ runId: "r", decisions: [{ toolCallId: "p1", action: "approve" }] });
      expect(transitions(runStatus.transitionToolCall)).toEqual([
        ["suspended", "resuming"],
        ["resuming", "running"],
        ["running", "succeeded"],
      ]);
      // The gate sees the call as new the first time, and as resuming when it replays.
      expect(seen).toEqual(["new", "resuming"]);
    } finally {
      await runtime.close();
    }
  });

  it("a denied call goes suspended → resuming → cancelled", async () => {
    const runtime = await payRuntime([]);
    try {
      await runtime.runDetailed({ agentId: "a", inputText: "pay", runId: "r" });
      vi.mocked(runStatus.transitionToolCall).mockClear();
      await runtime.decide({ runId: "r", decisions: [{ toolCallId: "p1", action: "deny" }] });
      expect(transitions(runStatus.transitionToolCall)).toEqual([
        ["suspended", "resuming"],
        ["resuming", "cancelled"],
      ]);
    } finally {
      await runtime.close();
    }
  });
});
