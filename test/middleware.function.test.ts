import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  defineTool,
  type FunctionMiddleware,
  type FunctionMiddlewareContext,
  MiddlewareTermination,
  type RunStreamChunk,
  type ToolContext,
  type ToolMessage,
} from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

function toolMessages(messages: readonly { role: string }[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => message.role === "tool");
}

function _kinds(chunks: readonly RunStreamChunk[]): string[] {
  return chunks.map((chunk) => chunk.kind);
}

const ADD_THEN_ANSWER = [{ text: "adding", toolCalls: [toolCall("add", { a: 2, b: 40 })] }, { text: "42" }];

describe("function middleware", () => {
  it("is the tool's own context: tool id, arguments, kwargs and metadata with the call id, the result after next()", async () => {
    let middlewareContext: FunctionMiddlewareContext | undefined;
    let toolContext: ToolContext | undefined;
    let seen: Record<string, unknown> = {};
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }, ctx) => {
        toolContext = ctx;
        return a + b;
      },
    });
    const spy: FunctionMiddleware = async (ctx, next) => {
      middlewareContext = ctx;
      seen = {
        toolId: ctx.toolId,
        toolCallId: ctx.toolCallId,
        tool: ctx.tool.name,
        arguments: { ...ctx.arguments },
        kwargs: { ...ctx.kwargs },
        metadata: { ...ctx.metadata },
        result: ctx.result,
      };
      await next();
      seen.after = ctx.result;
    };
    const { runtime } = await runtimeWith(
      [{ toolCalls: [toolCall("add", { a: 2, b: 40 }, "call-1")] }, { text: "42" }],
      { tools: [tool], middleware: { function: [spy] } },
    );
    await runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      functionInvocationKwargs: { tenant: "acme" },
    });
    expect(seen).toEqual({
      toolId: "add",
      toolCallId: "call-1",
      tool: "add",
      arguments: { a: 2, b: 40 },
      kwargs: { tenant: "acme" },
      metadata: { callId: "call-1" },
      result: undefined,
      after: 42,
    });
    expect(middlewareContext).toBe(toolContext);
    await runtime.close();
  });

  it("hands the tool the arguments and kwargs it changed, for that call only", async () => {
    const calls: { params: unknown; kwargs: unknown }[] = [];
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: (params, ctx) => {
        calls.push({ params, kwargs: ctx.kwargs });
        return params.a + params.b;
      },
    });
    const change: FunctionMiddleware = async (ctx, next) => {
      if (ctx.toolCallId === "c1") {
        ctx.arguments = { ...ctx.arguments, b: 100 };
        ctx.kwargs.traced = true;
      } else {
        ctx.arguments.a = -1; // edited in place
      }
      await next();
    };
    const { runtime, model } = await runtimeWith(
      [
        { toolCalls: [toolCall("add", { a: 1, b: 2 }, "c1"), toolCall("add", { a: 3, b: 4 }, "c2")] },
        { text: "done" },
      ],
      { tools: [tool], middleware: { function: [change] } },
    );
    await runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      functionInvocationKwargs: { tenant: "acme" },
    });
    expect(calls).toEqual([
      { params: { a: 1, b: 100 }, kwargs: { tenant: "acme", traced: true } },
      { params: { a: -1, b: 4 }, kwargs: { tenant: "acme" } },
    ]);
    expect(toolMessages(model.requests[1]!.messages).map((message) => message.content)).toEqual(["101", "3"]);
    await runtime.close();
  });

  it("validates changed arguments again: invalid ones are a tool.validation error the model sees", async () => {
    let ran = 0;
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        ran++;
        return a + b;
      },
    });
    let thrown: unknown;
    const corrupt: FunctionMiddleware = async (ctx, next) => {
      if (ctx.toolCallId === "c1") ctx.arguments = { a: "two", b: 2 };
      else ctx.arguments.b = "in place";
      try {
        await next();
      } catch (error) {
        thrown ??= error;
        throw error;
      }
    };
    const { runtime, model } = await runtimeWith(
      [
        { toolCalls: [toolCall("add", { a: 1, b: 2 }, "c1"), toolCall("add", { a: 1, b: 2 }, "c2")] },
        { text: "sorry" },
      ],
      { tools: [tool], middleware: { function: [corrupt] } },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    expect(ran).toBe(0);
    expect(thrown).toMatchObject({ code: "tool.validation" });
    const messages = toolMessages(model.requests[1]!.messages);
    expect(messages.map((message) => message.isError)).toEqual([true, true]);
    expect(JSON.parse(messages[0]!.content).error).toMatchObject({
      code: "tool.validation",
      message: expect.stringMatching(/^Invalid arguments for tool 'add':\n- a: /),
    });
    expect(JSON.parse(messages[1]!.content).error.message).toMatch(/- b: /);
    await runtime.close();
  });

  it("skips the tool when next() is not called: ctx.result is the call's result", async () => {
    let ran = 0;
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: () => {
        ran++;
        return 0;
      },
    });
    const mock: FunctionMiddleware = (ctx) => {
      ctx.result = { mocked: true };
    };
    const { runtime, model } = await runtimeWith(ADD_THEN_ANSWER, {
      tools: [tool],
      middleware: { function: [mock] },
    });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(ran).toBe(0);
    expect(toolMessages(model.requests[1]!.messages)[0]!.content).toBe('{"mocked":true}');
    expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload).toMatchObject({
      result: { mocked: true },
    });
    expect(chunks.at(-1)!.result!.usage.toolCalls).toBe(1);
    await runtime.close();
  });

  it("replaces the result after next(), and turns a failure it catches into a result", async () => {
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        if (a < 0) throw new Error("negative");
        return a + b;
      },
    });
    const wrap: FunctionMiddleware = async (ctx, next) => {
      try {
        await next();
        ctx.result = { sum: ctx.result };
      } catch (error) {
        ctx.result = { fallback: (error as Error).message };
      }
    };
    const { runtime, model } = await runtimeWith(
      [
        { toolCalls: [toolCall("add", { a: 1, b: 2 }, "c1"), toolCall("add", { a: -1, b: 2 }, "c2")] },
        { text: "done" },
      ],
      { tools: [tool], middleware: { function: [wrap] } },
    );
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(toolMessages(model.requests[1]!.messages).map((message) => message.content)).toEqual([
      '{"sum":3}',
      '{"fallback":"negative"}',
    ]);
    await runtime.close();
  });

  it("retries the tool with a second next()", async () => {
    let attempts = 0;
    const flaky = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        if (++attempts === 1) throw new Error("flaky");
        return a + b;
      },
    });
    const retry: FunctionMiddleware = async (_ctx, next) => {
      try {
        await next();
      } catch {
        await next();
      }
    };
    const { runtime, model } = await runtimeWith(ADD_THEN_ANSWER, {
      tools: [flaky],
      middleware: { function: [retry] },
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(attempts).toBe(2);
    expect(toolMessages(model.requests[1]!.messages)[0]!.content).toBe("42");
    expect(result.usage.toolCalls).toBe(1);
    await runtime.close();
  });

  it("leaves a tool's failure as it was when it leaves the chain", async () => {
    const failing = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: () => {
        throw new Error("boom");
      },
    });
    const { runtime, model } = await runtimeWith(ADD_THEN_ANSWER, {
      tools: [failing],
      middleware: {
        function: [async (_ctx: FunctionMiddlewareContext, next: () => Promise<void>) => next()],
      },
    });
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    const [message] = toolMessages(model.requests[1]!.messages);
    expect(message!.isError).toBe(true);
    expect(JSON.parse(message!.content).error).toEqual({ code: "tool.error", message: "boom" });
    await runtime.close();
  });

  it("ends the run on MiddlewareTermination: the result is recorded, the calls after it are interrupted, no further model call", async () => {
    let ran = 0;
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        ran++;
        return a + b;
      },
    });
    const stop: FunctionMiddleware = async (ctx, next) => {
      await next();
      if (ctx.toolCallId === "c1") throw new MiddlewareTermination({ result: `paid ${String(ctx.result)}` });
    };
    const { runtime, model } = await runtimeWith(
      [
        {
          text: "paying",
          toolCalls: [toolCall("add", { a: 1, b: 2 }, "c1"), toolCall("add", { a: 3, b: 4 }, "c2")],
        },
        { text: "never" },
      ],
      { tools: [tool], middleware: { function: [stop] } },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", sessionId: "s", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(model.callCount).toBe(1);
    expect(ran).toBe(1);
    expect(result).toMatchObject({
      stopReason: "completed",
      termination: { type: "behavior_requested", value: "middleware" },
      finalOutput: "paying",
    });
    const finished = chunks.filter((chunk) => chunk.kind === "tool.finished").map((chunk) => chunk.payload);
    expect(finished).toEqual([
      expect.objectContaining({ toolCallId: "c1", result: "paid 3" }),
      expect.objectContaining({ toolCallId: "c2", code: "tool.cancelled", ok: false }),
    ]);
    expect(
      toolMessages(await runtime.sessionManager.loadMessages("s")).map((message) => message.content),
    ).toEqual(["paid 3", "[Tool execution was interrupted]"]);
    await runtime.close();
  });

  it("records ctx.result on a termination without a result of its own", async () => {
    const stop: FunctionMiddleware = (ctx) => {
      ctx.result = "short-circuited";
      throw new MiddlewareTermination();
    };
    const { runtime, model } = await runtimeWith(ADD_THEN_ANSWER, { middleware: { function: [stop] } });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(model.callCount).toBe(1);
    expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload.result).toBe("short-circuited");
    expect(chunks.at(-1)!.result!.termination).toEqual({ type: "behavior_requested", value: "middleware" });
    await runtime.close();
  });

  it("is not asked about calls the gate suspends", async () => {
    let called = 0;
    const guarded = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      approvalMode: "always",
      execute: ({ a, b }) => a + b,
    });
    const { runtime } = await runtimeWith(ADD_THEN_ANSWER, {
      tools: [guarded],
      middleware: {
        function: [
          async (_ctx: FunctionMiddlewareContext, next: () => Promise<void>) => {
            called++;
            await next();
          },
        ],
      },
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("suspended");
    expect(called).toBe(0);
    await runtime.close();
  });

  it("keeps a batch executor's scheduling: concurrency-safe calls run together, the others after them", async () => {
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const slow = (name: string, concurrencySafe: boolean) =>
      defineTool({
        name,
        description: name,
        inputSchema: z.object({}),
        concurrencySafe,
        execute: async () => {
          running++;
          most = Math.max(most, running);
          order.push(`${name}>`);
          await new Promise((resolve) => setTimeout(resolve, 20));
          order.push(`<${name}`);
          running--;
          return name;
        },
      });
    const seen: string[] = [];
    const { runtime, model } = await runtimeWith(
      [
        {
          toolCalls: [
            toolCall("serial", {}, "c0"),
            toolCall("left", {}, "c1"),
            toolCall("right", {}, "c2"),
            toolCall("mocked", {}, "c3"),
          ],
        },
        { text: "done" },
      ],
      {
        tools: [slow("serial", false), slow("left", true), slow("right", true), slow("mocked", true)],
        tool_executor: { type: "concurrent_batch" },
        middleware: {
          function: [
            async (ctx: FunctionMiddlewareContext, next: () => Promise<void>) => {
              seen.push(ctx.toolId);
              if (ctx.toolId === "mocked") ctx.result = "not run";
              else await next();
            },
          ],
        },
      },
    );
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(seen).toEqual(["serial", "left", "right", "mocked"]);
    expect(most).toBe(2);
    expect(order.slice(-2)).toEqual(["serial>", "<serial"]);
    expect(toolMessages(model.requests[1]!.messages).map((message) => message.content)).toEqual([
      "serial",
      "left",
      "right",
      "not run",
    ]);
    await runtime.close();
  });
});
