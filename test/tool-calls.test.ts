import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  type HookContext,
  registerPlugin,
  SuspendToolCall,
  type ToolCallState,
  type ToolExecutionRequest,
  type ToolMessage,
} from "../src/index.js";
import { addTool, collect, runtimeWith, toolCall } from "./support/harness.js";

function toolMessages(transcript: readonly { role: string }[]): ToolMessage[] {
  return transcript.filter((message): message is ToolMessage => message.role === "tool");
}

describe("tool calls: one result per call", () => {
  it("gives a malformed argument back to the model as a tool error and goes on", async () => {
    const { runtime, model } = await runtimeWith([
      { toolCalls: [{ name: "add", rawArguments: '{"a": 1, "b": ' }] },
      { text: "sorry" },
    ]);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    const [message] = toolMessages(model.requests[1]!.messages);
    expect(message!.isError).toBe(true);
    expect(JSON.parse(message!.content)).toEqual({
      ok: false,
      error: {
        code: "tool.validation",
        message: expect.stringContaining(
          "Malformed arguments for tool 'add': the arguments are not valid JSON",
        ),
      },
    });
    await runtime.close();
  });

  it("refuses arguments that fail the schema, naming the path", async () => {
    const { runtime, model } = await runtimeWith([
      { toolCalls: [toolCall("add", { a: "one", b: 2 })] },
      { text: "ok" },
    ]);
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    const [message] = toolMessages(model.requests[1]!.messages);
    expect(JSON.parse(message!.content).error.message).toMatch(/^Invalid arguments for tool 'add':\n- a: /);
    await runtime.close();
  });

  it("answers an unknown tool with a near match", async () => {
    const { runtime, model } = await runtimeWith([
      { toolCalls: [toolCall("addd", { a: 1, b: 2 })] },
      { text: "ok" },
    ]);
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    const [message] = toolMessages(model.requests[1]!.messages);
    expect(JSON.parse(message!.content).error).toEqual({
      code: "tool.not_found",
      message: "Tool 'addd' is not available. Did you mean 'add'? Available tools: add",
    });
    await runtime.close();
  });

  it("gives a thrown tool error to the model and counts failed calls as errors", async () => {
    const broken = defineTool({
      name: "broken",
      description: "always fails",
      execute: () => {
        throw new Error("disk on fire");
      },
    });
    const { runtime, model } = await runtimeWith([{ toolCalls: [toolCall("broken", {})] }, { text: "ok" }], {
      tools: [broken],
    });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const finished = chunks.find((chunk) => chunk.kind === "tool.finished")!;
    expect(finished.payload).toMatchObject({
      toolId: "broken",
      error: "disk on fire",
      code: "tool.error",
      ok: false,
    });
    expect(chunks.some((chunk) => chunk.kind === "tool.started")).toBe(true);
    expect(chunks.at(-1)!.result!.usage.toolCalls).toBe(1);
    expect(toolMessages(model.requests[1]!.messages)[0]!.content).toBe(
      JSON.stringify({ ok: false, error: { code: "tool.error", message: "disk on fire" } }),
    );
    await runtime.close();
  });

  it("blocks: the call fails, later calls are interrupted, the run ends Blocked", async () => {
    const gate = {
      toolGate: (_ctx: HookContext, call: ToolCallState) =>
        call.params.a === 666 ? { action: "block" as const, reason: "number of the beast" } : undefined,
    };
    const { runtime } = await runtimeWith(
      [
        {
          toolCalls: [
            toolCall("add", { a: 1, b: 1 }, "c1"),
            toolCall("add", { a: 666, b: 1 }, "c2"),
            toolCall("add", { a: 2, b: 2 }, "c3"),
          ],
        },
      ],
      { hooks: [gate] },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(result.stopReason).toBe("failed");
    expect(result.termination).toEqual({ type: "blocked", value: "number of the beast" });
    const finished = chunks.filter((chunk) => chunk.kind === "tool.finished").map((chunk) => chunk.payload);
    expect(finished.map((payload) => [payload.toolCallId, payload.error ?? payload.result])).toEqual([
      ["c2", "Blocked: number of the beast"],
      ["c3", "[Tool execution was interrupted]"],
      ["c1", 2],
    ]);
    await runtime.close();
  });

  it("setResult records the gate's result without running the tool", async () => {
    let ran = 0;
    const counted = defineTool({ name: "count", description: "", execute: () => ++ran });
    const { runtime, model } = await runtimeWith([{ toolCalls: [toolCall("count", {})] }, { text: "ok" }], {
      tools: [counted],
      hooks: [{ toolGate: () => ({ action: "setResult" as const, result: { cached: true } }) }],
    });
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(ran).toBe(0);
    expect(toolMessages(model.requests[1]!.messages)[0]!.content).toBe('{"cached":true}');
    await runtime.close();
  });

  it("suspends a call that needs approval while the others of the step still run", async () => {
    const dangerous = defineTool({
      name: "wire_money",
      description: "",
      inputSchema: z.object({ amount: z.number() }),
      approvalMode: "always",
      execute: () => "sent",
    });
    const { runtime } = await runtimeWith(
      [{ toolCalls: [toolCall("wire_money", { amount: 5 }, "w1"), toolCall("add", { a: 1, b: 2 }, "a1")] }],
      { tools: [addTool, dangerous] },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(result.stopReason).toBe("suspended");
    expect(result.pendingToolCalls).toEqual([
      {
        toolCallId: "w1",
        toolId: "wire_money",
        params: { amount: 5 },
        reason: "Tool 'wire_money' requires approval",
        resumeMode: "replay_tool_call",
      },
    ]);
    expect(chunks.filter((chunk) => chunk.kind === "tool.suspended")).toHaveLength(1);
    expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload).toMatchObject({
      toolCallId: "a1",
      result: 3,
    });
    const record = await runtime.getRun(result.runId);
    expect(record).toMatchObject({ status: "waiting", stopReason: "suspended" });
    await runtime.close();
  });

  it("sequential mode stops at a suspension raised during execution; later calls are interrupted", async () => {
    const ask = defineTool({
      name: "ask_user",
      description: "",
      execute: () => {
        throw new SuspendToolCall({ reason: "pick one" });
      },
    });
    const { runtime } = await runtimeWith(
      [{ toolCalls: [toolCall("ask_user", {}, "q1"), toolCall("add", { a: 1, b: 2 }, "a1")] }],
      { tools: [addTool, ask] },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(result.stopReason).toBe("suspended");
    expect(result.pendingToolCalls.map((call) => [call.toolCallId, call.reason, call.resumeMode])).toEqual([
      ["q1", "pick one", "use_decision_as_tool_result"],
    ]);
    expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload).toMatchObject({
      toolCallId: "a1",
      error: "[Tool execution was interrupted]",
    });
    await runtime.close();
  });

  it("parallel mode (concurrent executor) runs safe calls together and collects every result", async () => {
    const order: string[] = [];
    const slow = (name: string, ms: number) =>
      defineTool({
        name,
        description: "",
        concurrencySafe: true,
        execute: async () => {
          order.push(`start ${name}`);
          await new Promise((resolve) => setTimeout(resolve, ms));
          order.push(`end ${name}`);
          return name;
        },
      });
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("slow", {}, "s"), toolCall("fast", {}, "f")] }, { text: "ok" }],
      { tools: [slow("slow", 30), slow("fast", 1)], tool_executor: { type: "concurrent_batch" } },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    expect(order).toEqual(["start slow", "start fast", "end fast", "end slow"]);
    expect(toolMessages(model.requests[1]!.messages).map((message) => message.toolCallId)).toEqual([
      "s",
      "f",
    ]);
    await runtime.close();
  });

  it("a policy refusal fails only that call and the run goes on", async () => {
    registerPlugin("tool_executor", "unlucky_policy", () => ({
      execute: async (request: ToolExecutionRequest) => ({
        toolId: request.toolId,
        success: true,
        data: await request.tool.invoke(request.params, request.context),
        metadata: {},
      }),
      evaluatePolicy: (request: ToolExecutionRequest) =>
        request.params.a === 13 ? { allowed: false, reason: "unlucky" } : { allowed: true, reason: "" },
    }));
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("add", { a: 13, b: 1 }), toolCall("add", { a: 1, b: 1 })] }, { text: "ok" }],
      { tool_executor: { type: "unlucky_policy" } },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    const messages = toolMessages(model.requests[1]!.messages);
    expect(JSON.parse(messages[0]!.content).error).toEqual({
      code: "tool.permission_denied",
      message: "Policy denied tool 'add': unlucky",
    });
    expect(messages[1]!.content).toBe("2");
    await runtime.close();
  });

  it("streams a streaming tool's output as tool.delta", async () => {
    const streamer = defineTool({
      name: "spell",
      description: "",
      execute: () => "unused",
      stream: async function* () {
        yield { type: "delta" as const, text: "k" };
        yield { type: "delta" as const, text: "ee" };
        yield { type: "delta" as const, text: "l" };
      },
    });
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("spell", {}, "s1")] }, { text: "ok" }], {
      tools: [streamer],
    });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(chunks.filter((chunk) => chunk.kind === "tool.delta").map((chunk) => chunk.payload.text)).toEqual([
      "k",
      "ee",
      "l",
    ]);
    expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload.result).toBe("keel");
    await runtime.close();
  });

  it("accepts a plain tool object, filling in the execution spec it leaves out", async () => {
    const plain = {
      name: "shout",
      description: "",
      schema: () => ({ type: "object", properties: { text: { type: "string" } } }),
      invoke: (params: Record<string, unknown>) => String(params.text).toUpperCase(),
    };
    const careful = {
      name: "careful",
      description: "",
      schema: () => ({ type: "object", properties: {} }),
      executionSpec: () => ({ approvalMode: "always" }),
      invoke: () => "done",
    };
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("shout", { text: "hi" }, "s1"), toolCall("careful", {}, "c1")] }],
      { tools: [plain, careful] },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(model.requests[0]!.tools!.map((tool) => [tool.name, tool.inputSchema])).toEqual([
      ["shout", { type: "object", properties: { text: { type: "string" } } }],
      ["careful", { type: "object", properties: {} }],
    ]);
    expect(result.stopReason).toBe("suspended");
    expect(result.pendingToolCalls.map((call) => call.toolCallId)).toEqual(["c1"]);
    expect(result.usage.toolCalls).toBe(1);
    await runtime.close();
  });
});

describe("a ToolResult with ok: false", () => {
  it("fails the call with the result's error code while the model sees the whole result", async () => {
    const build = defineTool({
      name: "build",
      description: "Build the project",
      inputSchema: z.object({}),
      execute: () => ({
        ok: false,
        summary: "make exited 2",
        data: { stderr: "make: *** No rule to make target 'all'" },
        artifacts: [],
        error: { code: "shell.exit_status", message: "make exited 2" },
      }),
    });
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("build", {})] }, { toolCalls: [toolCall("build", {})] }, { text: "broken" }],
      { tools: [build] },
    );
    const events: { kind: string; payload: Record<string, unknown> }[] = [];
    runtime.eventBus.subscribe("*", (event) => {
      events.push({ kind: event.kind, payload: event.payload });
    });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(chunks.filter((chunk) => chunk.kind === "tool.finished")).toHaveLength(2);
    const failed = events.filter((event) => event.kind === "tool.failed");
    expect(failed.map((event) => [event.payload.code, event.payload.error])).toEqual([
      ["shell.exit_status", "make exited 2"],
      ["shell.exit_status", "make exited 2"],
    ]);
    expect(events.some((event) => event.kind === "tool.completed")).toBe(false);
    const [message] = toolMessages(model.requests[1]!.messages);
    expect(message!.isError).toBe(true);
    expect(JSON.parse(message!.content)).toMatchObject({
      ok: false,
      summary: "make exited 2",
      data: { stderr: "make: *** No rule to make target 'all'" },
      error: { code: "shell.exit_status" },
    });
    await runtime.close();
  });
});

describe("the retry executor over safe, in a run", () => {
  it("retries a call whose attempt timed out even when the tool read its signal, with a fresh signal each time", async () => {
    const seen: boolean[] = [];
    const flaky = defineTool({
      name: "flaky",
      description: "Hangs until aborted, twice",
      timeoutMs: 20,
      execute: async (_params, ctx) => {
        seen.push(ctx.signal.aborted);
        if (seen.length < 3) {
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          return "too late";
        }
        return "third time";
      },
    });
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("flaky", {}, "f1")] }, { text: "done" }],
      {
        tools: [flaky],
        tool_executor: { type: "retry", config: { initial_delay_ms: 0, max_attempts: 3 } },
      },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    expect(seen).toEqual([false, false, false]);
    const toolMessage = model.requests[1]!.messages.find((message) => message.role === "tool");
    expect(toolMessage?.content).toBe("third time");
    await runtime.close();
  });
});
