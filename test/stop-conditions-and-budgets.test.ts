import { describe, expect, it } from "vitest";
import { defineTool, Runtime } from "../src/index.js";
import { addTool, collect, runtimeWith, toolCall } from "./support/harness.js";

/** A turn that calls add with these numbers, with usage. */
const addTurn = (a: number, b = 1, usage = { inputTokens: 10, outputTokens: 5 }) => ({
  toolCalls: [toolCall("add", { a, b })],
  usage,
});

describe("stop conditions, evaluated at StepEnd", () => {
  it("max_rounds → max_steps", async () => {
    const { runtime, model } = await runtimeWith([addTurn(1), addTurn(2), addTurn(3), { text: "x" }], {
      stop_conditions: [{ type: "max_rounds", rounds: 2 }],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("max_steps");
    expect(result.termination).toEqual({ type: "stopped", value: "max_rounds" });
    expect(model.callCount).toBe(2);
    expect(result.errorDetails?.code).toBe("run.stopped.max_rounds");
    await runtime.close();
  });

  it("token_budget → budget_exhausted", async () => {
    const { runtime } = await runtimeWith([addTurn(1), addTurn(2), { text: "x" }], {
      stop_conditions: [{ type: "token_budget", max_total: 20 }],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("budget_exhausted");
    expect(result.usage.totalTokens).toBe(30);
    await runtime.close();
  });

  it("consecutive_errors → failed", async () => {
    const broken = defineTool({
      name: "broken",
      description: "",
      execute: () => {
        throw new Error("nope");
      },
    });
    const fail = { toolCalls: [toolCall("broken", {})] };
    const { runtime } = await runtimeWith([fail, fail, fail, { text: "x" }], {
      tools: [broken],
      stop_conditions: [{ type: "consecutive_errors", max: 2 }],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("failed");
    expect(result.termination).toEqual({ type: "stopped", value: "consecutive_errors" });
    expect(result.metadata.steps).toBe(2);
    await runtime.close();
  });

  it("stop_on_tool → completed with the step's text", async () => {
    const { runtime } = await runtimeWith(
      [{ text: "calling", toolCalls: [toolCall("add", { a: 1, b: 1 })] }, { text: "never" }],
      { stop_conditions: [{ type: "stop_on_tool", tool_name: "add" }] },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    expect(result.termination).toEqual({ type: "stopped", value: "stop_on_tool" });
    expect(result.finalOutput).toBe("calling");
    expect(result.error).toBeUndefined();
    await runtime.close();
  });

  it("content_match → completed", async () => {
    const { runtime } = await runtimeWith(
      [
        { text: "working on it", toolCalls: [toolCall("add", { a: 1, b: 1 })] },
        { text: "DONE!", toolCalls: [toolCall("add", { a: 1, b: 2 })] },
        { text: "x" },
      ],
      { stop_conditions: [{ type: "content_match", pattern: "^DONE" }] },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.termination).toEqual({ type: "stopped", value: "content_match" });
    expect(result.finalOutput).toBe("DONE!");
    await runtime.close();
  });

  it("loop_detection → failed when the last steps issued identical tool calls", async () => {
    const same = { toolCalls: [{ name: "add", rawArguments: '{"b": 1, "a": 1}' }] };
    const { runtime } = await runtimeWith([addTurn(1), same, same, same, { text: "x" }], {
      stop_conditions: [{ type: "loop_detection", window: 3 }],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.termination).toEqual({ type: "stopped", value: "loop_detection" });
    expect(result.stopReason).toBe("failed");
    expect(result.metadata.steps).toBe(3);
    await runtime.close();
  });

  it("timeout stop condition → timeout", async () => {
    const { runtime } = await runtimeWith([{ ...addTurn(1), delayMs: 1050 }, { text: "x" }], {
      stop_conditions: [{ type: "timeout", seconds: 1 }],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("timeout");
    await runtime.close();
  });

  it("a zero limit disables a condition", async () => {
    const { runtime } = await runtimeWith([addTurn(1), { text: "fine" }], {
      stop_conditions: [
        { type: "max_rounds", rounds: 0 },
        { type: "token_budget", max_total: 0 },
      ],
    });
    expect((await runtime.runDetailed({ agentId: "a", inputText: "go" })).finalOutput).toBe("fine");
    await runtime.close();
  });
});

describe("limits and budgets end runs with stop reasons, never exceptions", () => {
  it("budget.maxSteps → max_steps", async () => {
    const { runtime, model } = await runtimeWith([addTurn(1), addTurn(2), addTurn(3), { text: "x" }]);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", budget: { maxSteps: 2 } });
    expect(result.stopReason).toBe("max_steps");
    expect(model.callCount).toBe(2);
    expect(result.errorDetails).toMatchObject({
      code: "run.max_steps",
      hint: "Raise runtime.max_steps in the agent's config or budget.maxSteps in the request",
    });
    await runtime.close();
  });

  it("runtime.max_steps → max_steps when the request has no budget.maxSteps", async () => {
    const { runtime } = await runtimeWith([addTurn(1), addTurn(2), addTurn(3), { text: "x" }], {
      runtime: { max_steps: 1 },
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("max_steps");
    expect(result.metadata.steps).toBe(1);
    await runtime.close();
  });

  it("budget.maxSteps replaces runtime.max_steps, above it too (budget.maxSteps ?? runtime.max_steps)", async () => {
    const turns = Array.from({ length: 20 }, (_, index) => addTurn(index));
    const { runtime } = await runtimeWith([...turns, { text: "done" }]);
    // runtime.max_steps is 16 by default; the request's 30 is the run's limit.
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", budget: { maxSteps: 30 } });
    expect(result.stopReason).toBe("completed");
    expect(result.metadata.steps).toBe(21);
    const { runtime: small } = await runtimeWith([addTurn(1), addTurn(2), addTurn(3), { text: "x" }], {
      runtime: { max_steps: 1 },
    });
    const above = await small.runDetailed({ agentId: "a", inputText: "go", budget: { maxSteps: 5 } });
    expect(above.stopReason).toBe("completed");
    expect(above.metadata.steps).toBe(4);
    await runtime.close();
    await small.close();
  });

  it("a max_rounds stop condition still applies under a larger budget.maxSteps: the lowest wins", async () => {
    const turns = Array.from({ length: 20 }, (_, index) => addTurn(index));
    const { runtime, model } = await runtimeWith([...turns, { text: "done" }], {
      stop_conditions: [{ type: "max_rounds", rounds: 3 }],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", budget: { maxSteps: 30 } });
    expect(result.stopReason).toBe("max_steps");
    expect(result.termination).toEqual({ type: "stopped", value: "max_rounds" });
    expect(model.callCount).toBe(3);
    await runtime.close();
  });

  it("maxToolCalls → max_steps, and every call still has one result", async () => {
    const { runtime } = await runtimeWith([
      {
        toolCalls: [
          toolCall("add", { a: 1, b: 1 }, "x1"),
          toolCall("add", { a: 2, b: 2 }, "x2"),
          toolCall("add", { a: 3, b: 3 }, "x3"),
        ],
      },
      { text: "never" },
    ]);
    const chunks = await collect(
      runtime.stream({ agentId: "a", inputText: "go", budget: { maxToolCalls: 2 } }),
    );
    const result = chunks.at(-1)!.result!;
    expect(result.stopReason).toBe("max_steps");
    expect(result.termination).toEqual({ type: "stopped", value: "max_tool_calls" });
    expect(result.usage.toolCalls).toBe(2);
    const finished = chunks
      .filter((chunk) => chunk.kind === "tool.finished")
      .map((chunk) => chunk.payload.toolCallId);
    expect(finished.sort()).toEqual(["x1", "x2", "x3"]);
    await runtime.close();
  });

  it("maxDurationMs → timeout, cutting a slow model call short", async () => {
    const { runtime } = await runtimeWith([{ text: "slow", delayMs: 5000 }]);
    const result = await runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      budget: { maxDurationMs: 30 },
    });
    expect(result.stopReason).toBe("timeout");
    expect(result.errorDetails?.code).toBe("run.timeout");
    await runtime.close();
  });

  it("step_timeout_ms → timeout, cutting a slow tool short", async () => {
    const sleepy = defineTool({
      name: "sleepy",
      description: "",
      execute: (_input, ctx) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, 5000);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(new Error("aborted"));
          });
        }),
    });
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("sleepy", {})] }, { text: "x" }], {
      tools: [sleepy],
      runtime: { step_timeout_ms: 30 },
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("timeout");
    await runtime.close();
  });

  it("maxCostUsd → budget_exhausted, checked after the call that crossed it", async () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 0 };
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          tools: [addTool],
          llm: {
            provider: "mock",
            model: "priced",
            pricing: { input: 1, output: 1 },
            script: [addTurn(1, 1, usage), addTurn(2, 1, usage), { text: "x" }],
          },
        },
      ],
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go", budget: { maxCostUsd: 1.5 } });
    expect(result.stopReason).toBe("budget_exhausted");
    expect(result.usage.costUsd).toBe(2);
    expect(result.usage.costBreakdown).toEqual({ input: 2, output: 0, cachedRead: 0, cachedWrite: 0 });
    expect(result.errorDetails?.code).toBe("run.budget_exhausted");
    await runtime.close();
  });

  it("maxTotalTokens → budget_exhausted before the call that would cross it", async () => {
    const { runtime, model } = await runtimeWith([addTurn(1), addTurn(2), { text: "x" }]);
    const result = await runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      budget: { maxTotalTokens: 20 },
    });
    expect(result.stopReason).toBe("budget_exhausted");
    expect(model.callCount).toBe(2);
    await runtime.close();
  });

  it("with cost unknown, maxCostUsd emits budget.cost_skipped once and does not enforce", async () => {
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          tools: [addTool],
          llm: {
            provider: "mock",
            model: "unpriced",
            pricing: { output: 1 },
            script: [addTurn(1), addTurn(2), { text: "done" }],
          },
        },
      ],
    });
    const chunks = await collect(
      runtime.stream({ agentId: "a", inputText: "go", budget: { maxCostUsd: 0.000001 } }),
    );
    expect(chunks.filter((chunk) => chunk.kind === "budget.cost_skipped")).toHaveLength(1);
    expect(chunks.at(-1)!.result).toMatchObject({ stopReason: "completed", usage: { costUsd: null } });
    await runtime.close();
  });
});
