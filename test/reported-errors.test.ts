import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { z } from "zod";
import {
  defineTool,
  getLogger,
  type HookContext,
  type Logger,
  type RunRecord,
  registerPlugin,
  type ToolMessage,
} from "../src/index.js";
import { InMemorySessionManager } from "../src/sessions/in-memory-session-manager.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

/**
 * Errors Keel does not let change a run's outcome are still never swallowed: each is a warning with its cause.
 * And a store failure that leaves a suspended run impossible to decide is the run's own error, not a footnote.
 */

let warn: MockInstance<Logger["warn"]>;
let error: MockInstance<Logger["error"]>;
beforeEach(() => {
  warn = vi.spyOn(getLogger(), "warn").mockImplementation(() => {});
  error = vi.spyOn(getLogger(), "error").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe("errors that do not change the outcome are reported", () => {
  it("warns, with the cause, when a StepEnd hook fails while a step ends on an error", async () => {
    const hookFailure = new Error("stepEnd exploded");
    const { runtime } = await runtimeWith([{ error: { type: "response", message: "model broke" } }], {
      hooks: [
        {
          stepEnd: (_ctx: HookContext) => {
            throw hookFailure;
          },
        },
      ],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    // The step's own error is what the run ends with.
    expect(result.stopReason).toBe("failed");
    expect(result.error).toContain("model broke");
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining("A StepEnd hook failed while step 1 ended early: stepEnd exploded"),
      expect.objectContaining({ cause: hookFailure, step: 1 }),
    );
    await runtime.close();
  });

  it("warns, with the cause, when a tool's afterInvoke fails; the call keeps its result", async () => {
    const afterFailure = new Error("afterInvoke exploded");
    const echo = defineTool({
      name: "echo",
      description: "Echo",
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    });
    echo.afterInvoke = () => {
      throw afterFailure;
    };
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("echo", { text: "hi" }, "e1")] }, { text: "done" }],
      { tools: [echo] },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    const shown = model.requests[1]!.messages.filter((m): m is ToolMessage => m.role === "tool");
    expect(shown.map((m) => m.content)).toEqual(["hi"]);
    expect(warn).toHaveBeenCalledWith(
      "afterInvoke of tool 'echo' failed: afterInvoke exploded",
      expect.objectContaining({ toolId: "echo", toolCallId: "e1", cause: afterFailure }),
    );
    await runtime.close();
  });
});

/** A store that keeps everything but a waiting run's record. */
class NoWaitingRecords extends InMemorySessionManager {
  override async saveRun(record: RunRecord): Promise<void> {
    if (record.status === "waiting") throw new Error("disk full");
    return super.saveRun(record);
  }
}

describe("a suspended run whose record cannot be stored", () => {
  const pay = defineTool({
    name: "pay",
    description: "Pay (needs approval)",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }) => `paid ${amount}`,
  });

  it("fails with the store's error and a hint, in its result and in its stream", async () => {
    registerPlugin("session", "no_waiting_records", () => new NoWaitingRecords());
    const { runtime } = await runtimeWith(
      // One turn for each run: both ask to pay.
      [
        { toolCalls: [toolCall("pay", { amount: 5 }, "p1")] },
        { toolCalls: [toolCall("pay", { amount: 6 }, "p2")] },
      ],
      { tools: [pay] },
      { session: { type: "no_waiting_records" } },
    );
    const result = await runtime.runDetailed({ agentId: "a", runId: "r1", inputText: "pay" });
    expect(result.stopReason).toBe("failed");
    expect(result.pendingToolCalls).toEqual([]);
    expect(result.error).toBe("Run r1 waits for decisions, but its record could not be stored: disk full");
    expect(result.errorDetails).toMatchObject({
      code: "store.query",
      hint: expect.stringContaining("The run cannot be decided later"),
    });
    expect(error).toHaveBeenCalledWith(result.error, expect.objectContaining({ runId: "r1" }));

    const chunks = await collect(runtime.stream({ agentId: "a", runId: "r2", inputText: "pay" }));
    const kinds = chunks.map((chunk) => chunk.kind);
    expect(kinds).toContain("run.failed");
    expect(kinds).not.toContain("run.suspended");
    const finished = chunks.at(-1)!;
    expect(finished.kind).toBe("run.finished");
    expect(finished.result).toMatchObject({
      stopReason: "failed",
      errorDetails: { hint: expect.stringContaining("The run cannot be decided later") },
    });
    await runtime.close();
  });
});
