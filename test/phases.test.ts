import { describe, expect, it } from "vitest";
import { defineTool, type Hook, type HookContext, type ToolCallState } from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

/** A hook on every phase that writes down what it saw. */
function recorder(log: string[]): Hook {
  const note = (phase: string) => (ctx: HookContext) => {
    log.push(ctx.call ? `${phase}:${ctx.call.id}` : `${phase}@${ctx.step}`);
  };
  return {
    runStart: note("runStart"),
    stepStart: note("stepStart"),
    beforeInference: note("beforeInference"),
    afterInference: note("afterInference"),
    toolGate: (_ctx: HookContext, call: ToolCallState) => {
      log.push(`toolGate:${call.id}`);
      return undefined;
    },
    beforeToolExecute: note("beforeToolExecute"),
    afterToolExecute: note("afterToolExecute"),
    stepEnd: note("stepEnd"),
    runEnd: note("runEnd"),
  };
}

describe("the nine phases", () => {
  it("run in order for a model turn with two tool calls", async () => {
    const log: string[] = [];
    const { runtime } = await runtimeWith(
      [
        { toolCalls: [toolCall("add", { a: 1, b: 2 }, "c1"), toolCall("add", { a: 3, b: 4 }, "c2")] },
        { text: "done" },
      ],
      { hooks: [recorder(log)] },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    expect(log).toEqual([
      "runStart@0",
      "stepStart@1",
      "beforeInference@1",
      "afterInference@1",
      "toolGate:c1",
      "toolGate:c2",
      "beforeToolExecute:c1",
      "afterToolExecute:c1",
      "beforeToolExecute:c2",
      "afterToolExecute:c2",
      "stepEnd@1",
      "stepStart@2",
      "beforeInference@2",
      "afterInference@2",
      "stepEnd@2",
      "runEnd@2",
    ]);
    await runtime.close();
  });

  it("runs runEnd on failure and sees the result", async () => {
    const seen: string[] = [];
    const { runtime } = await runtimeWith([{ error: { type: "response", message: "bad request" } }], {
      hooks: [
        { runEnd: (ctx: HookContext) => void seen.push(`${ctx.result?.stopReason}:${ctx.result?.error}`) },
      ],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("failed");
    expect(seen).toEqual(["failed:bad request"]);
    expect(result.usage.llmCalls).toBe(1);
    await runtime.close();
  });

  it("lets beforeInference edit the request and afterInference drop tool calls", async () => {
    const { runtime, model } = await runtimeWith([{ toolCalls: [toolCall("add", { a: 1, b: 2 })] }], {
      hooks: [
        {
          beforeInference: (ctx: HookContext) => {
            ctx.request!.tools = [];
            ctx.request!.system = "edited";
          },
          afterInference: (ctx: HookContext) => {
            ctx.response!.toolCalls = [];
            ctx.response!.text = "no tools today";
          },
        },
      ],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(model.requests[0]!.tools).toEqual([]);
    expect(model.requests[0]!.system).toBe("edited");
    expect(result.finalOutput).toBe("no tools today");
    expect(result.usage.toolCalls).toBe(0);
    await runtime.close();
  });

  it("ends the run BehaviorRequested when a hook asks to stop, with no further model call", async () => {
    const { runtime, model } = await runtimeWith(
      [{ text: "first", toolCalls: [toolCall("add", { a: 1, b: 2 })] }, { text: "never" }],
      { hooks: [{ stepEnd: (ctx: HookContext) => ctx.requestStop("enough") }] },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.termination).toEqual({ type: "behavior_requested", value: "enough" });
    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("first");
    expect(model.callCount).toBe(1);
    await runtime.close();
  });

  it("a stop afterInference asks for runs none of the step's calls; each gets a not-executed result", async () => {
    const ran: string[] = [];
    const record = defineTool({
      name: "record",
      description: "",
      execute: (_input, ctx) => {
        ran.push(ctx.toolCallId);
        return "recorded";
      },
    });
    const { runtime, model } = await runtimeWith(
      [
        { text: "first", toolCalls: [toolCall("record", {}, "c1"), toolCall("record", {}, "c2")] },
        { text: "next run" },
      ],
      {
        tools: [record],
        hooks: [
          {
            afterInference: (ctx: HookContext) => {
              if (ctx.run.inputText === "go") ctx.requestStop("enough");
            },
          },
        ],
      },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", sessionId: "s", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(result.termination).toEqual({ type: "behavior_requested", value: "enough" });
    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("first");
    expect(ran).toEqual([]);
    expect(result.usage.toolCalls).toBe(0);
    expect(chunks.some((chunk) => chunk.kind === "tool.started")).toBe(false);
    // The transcript stays valid: every call has exactly one result before any next model call.
    const messages = await runtime.sessionManager.loadMessages("s");
    expect(messages.map((message) => [message.role, message.role === "tool" ? message.content : ""])).toEqual(
      [
        ["user", ""],
        ["assistant", ""],
        ["tool", "[not executed: run stopped]"],
        ["tool", "[not executed: run stopped]"],
      ],
    );
    await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "again" });
    const sent = model.requests[1]!.messages;
    expect(sent.filter((message) => message.role === "tool").map((message) => message.toolCallId)).toEqual([
      "c1",
      "c2",
    ]);
    await runtime.close();
  });
});
