import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentMiddleware,
  type AgentMiddlewareContext,
  type ChatMiddleware,
  type ChatMiddlewareContext,
  ConfigValidationError,
  defineTool,
  type FunctionMiddleware,
  type FunctionMiddlewareContext,
  MiddlewareTermination,
  parseConfig,
  type RunStreamChunk,
  Runtime,
  type ToolContext,
  type ToolMessage,
} from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

function toolMessages(messages: readonly { role: string }[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => message.role === "tool");
}

function kinds(chunks: readonly RunStreamChunk[]): string[] {
  return chunks.map((chunk) => chunk.kind);
}

const ADD_THEN_ANSWER = [{ text: "adding", toolCalls: [toolCall("add", { a: 2, b: 40 })] }, { text: "42" }];

describe("middleware order", () => {
  it("nests each level's middleware outermost first: agent around chat and function, each around its callee", async () => {
    const log: string[] = [];
    const agent = (name: string): AgentMiddleware => ({
      async process(_ctx, next) {
        log.push(`${name}>`);
        await next();
        log.push(`<${name}`);
      },
    });
    const chat =
      (name: string): ChatMiddleware =>
      async (ctx, next) => {
        log.push(`${name}@${ctx.step}>`);
        await next();
        log.push(`<${name}@${ctx.step}`);
      };
    const fn =
      (name: string): FunctionMiddleware =>
      async (ctx, next) => {
        log.push(`${name}(${ctx.toolId})>`);
        await next();
        log.push(`<${name}(${ctx.toolId})`);
      };
    const traced = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        log.push("tool");
        return a + b;
      },
    });
    const { runtime } = await runtimeWith(ADD_THEN_ANSWER, {
      tools: [traced],
      hooks: [{ runStart: () => void log.push("RunStart"), runEnd: () => void log.push("RunEnd") }],
      middleware: {
        agent: [agent("A1"), agent("A2")],
        chat: [chat("C1"), chat("C2")],
        function: [fn("F1"), fn("F2")],
      },
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.finalOutput).toBe("42");
    expect(log).toEqual([
      "A1>",
      "A2>",
      "RunStart",
      "C1@1>",
      "C2@1>",
      "<C2@1",
      "<C1@1",
      "F1(add)>",
      "F2(add)>",
      "tool",
      "<F2(add)",
      "<F1(add)",
      "C1@2>",
      "C2@2>",
      "<C2@2",
      "<C1@2",
      "RunEnd",
      "<A2",
      "<A1",
    ]);
    await runtime.close();
  });
});

describe("agent middleware", () => {
  it("sees the run's request, session and kwargs before next() and its RunResult after", async () => {
    let before: Record<string, unknown> = {};
    let after: unknown;
    const spy: AgentMiddleware = async (ctx, next) => {
      before = {
        agentId: ctx.agentId,
        runId: ctx.runId,
        sessionId: ctx.sessionId,
        input: ctx.input,
        resumed: ctx.resumed,
        functionInvocationKwargs: { ...ctx.functionInvocationKwargs },
        clientKwargs: { ...ctx.clientKwargs },
        result: ctx.result,
      };
      await next();
      after = ctx.result;
    };
    const { runtime } = await runtimeWith([{ text: "hi" }], { middleware: { agent: [spy] } });
    const result = await runtime.runDetailed({
      agentId: "a",
      sessionId: "s1",
      runId: "r1",
      inputText: "hello",
      functionInvocationKwargs: { tenant: "acme" },
      clientKwargs: { region: "eu" },
    });
    expect(before).toEqual({
      agentId: "a",
      runId: "r1",
      sessionId: "s1",
      input: "hello",
      resumed: false,
      functionInvocationKwargs: { tenant: "acme" },
      clientKwargs: { region: "eu" },
      result: undefined,
    });
    expect(after).toBe(result);
    expect(result).toMatchObject({ runId: "r1", finalOutput: "hi", stopReason: "completed" });
    await runtime.close();
  });

  it("runs the body with the input and kwargs it changed before next()", async () => {
    let toolKwargs: unknown;
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }, ctx: ToolContext) => {
        toolKwargs = ctx.kwargs;
        return a + b;
      },
    });
    const rewrite: AgentMiddleware = async (ctx, next) => {
      ctx.input = `${ctx.input} (politely)`;
      ctx.functionInvocationKwargs.tenant = "acme";
      ctx.clientKwargs = { region: "eu" };
      await next();
    };
    const { runtime, model } = await runtimeWith(ADD_THEN_ANSWER, {
      tools: [tool],
      middleware: { agent: [rewrite] },
    });
    const request = {
      agentId: "a",
      sessionId: "s",
      inputText: "add",
      functionInvocationKwargs: { user: "u1" },
    };
    await runtime.runDetailed(request);
    expect(model.requests[0]!.messages.at(-1)).toEqual({ role: "user", content: "add (politely)" });
    expect(model.requests[0]!.clientKwargs).toEqual({ region: "eu" });
    expect(toolKwargs).toEqual({ user: "u1", tenant: "acme" });
    // The caller's request is not touched; the session keeps the input the run used.
    expect(request.functionInvocationKwargs).toEqual({ user: "u1" });
    expect((await runtime.sessionManager.loadMessages("s"))[0]).toEqual({
      role: "user",
      content: "add (politely)",
    });
    await runtime.close();
  });

  it("skips the run when next() is not called: ctx.result, completed, becomes the run's result", async () => {
    const refuse: AgentMiddleware = (ctx) => {
      ctx.result = { finalOutput: "I cannot help with that" };
    };
    const { runtime, model } = await runtimeWith([{ text: "never" }], { middleware: { agent: [refuse] } });
    const chunks = await collect(runtime.stream({ agentId: "a", sessionId: "s", inputText: "bad" }));
    expect(model.callCount).toBe(0);
    expect(kinds(chunks)).toEqual(["run.started", "run.finished"]);
    expect(chunks.at(-1)!.result).toMatchObject({
      finalOutput: "I cannot help with that",
      stopReason: "completed",
      termination: { type: "behavior_requested", value: "middleware" },
      pendingToolCalls: [],
      usage: { llmCalls: 0 },
      metadata: { agentId: "a", sessionId: "s", steps: 0 },
    });
    expect(await runtime.sessionManager.loadMessages("s")).toEqual([]);
    await runtime.close();
  });

  it("replaces the result after next()", async () => {
    const redact: AgentMiddleware = async (ctx, next) => {
      await next();
      ctx.result = { ...ctx.result, finalOutput: String(ctx.result?.finalOutput).replace("secret", "█") };
    };
    const { runtime } = await runtimeWith([{ text: "the secret is 42" }], {
      middleware: { agent: [redact] },
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "tell" });
    expect(result).toMatchObject({ finalOutput: "the █ is 42", stopReason: "completed" });
    expect(result.termination).toEqual({ type: "natural_end" });
    await runtime.close();
  });

  it("starts the run over on a second next(), counting both passes' usage", async () => {
    const retry: AgentMiddleware = async (ctx, next) => {
      await next();
      if (ctx.result?.stopReason === "failed") await next();
    };
    const { runtime, model } = await runtimeWith(
      [{ error: { type: "response", message: "bad gateway" } }, { text: "second time lucky" }],
      { middleware: { agent: [retry] } },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", sessionId: "s", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(result).toMatchObject({ finalOutput: "second time lucky", stopReason: "completed" });
    expect(model.callCount).toBe(2);
    expect(result.usage.llmCalls).toBe(2);
    expect(kinds(chunks).filter((kind) => kind === "run.started" || kind === "run.finished")).toEqual([
      "run.started",
      "run.finished",
    ]);
    expect(model.requests[1]!.messages).toEqual([{ role: "user", content: "go" }]);
    expect(await runtime.sessionManager.loadMessages("s")).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: "second time lucky" },
    ]);
    await runtime.close();
  });

  it("returns ctx.result on MiddlewareTermination, its own result when it has one", async () => {
    const stop: AgentMiddleware = async (ctx, next) => {
      await next();
      throw new MiddlewareTermination({ result: { ...ctx.result, finalOutput: "overridden" } });
    };
    const { runtime } = await runtimeWith([{ text: "original" }], { middleware: { agent: [stop] } });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result).toMatchObject({ finalOutput: "overridden", stopReason: "completed" });
    await runtime.close();

    const keep: AgentMiddleware = async (_ctx, next) => {
      await next();
      throw new MiddlewareTermination();
    };
    const second = await runtimeWith([{ text: "kept" }], { middleware: { agent: [keep] } });
    expect(await second.runtime.runDetailed({ agentId: "a", inputText: "go" })).toMatchObject({
      finalOutput: "kept",
      stopReason: "completed",
      termination: { type: "natural_end" },
    });
    await second.runtime.close();
  });

  it("fails the run with what agent middleware throws", async () => {
    const broken: AgentMiddleware = () => {
      throw new Error("quota exceeded");
    };
    const { runtime, model } = await runtimeWith([{ text: "never" }], { middleware: { agent: [broken] } });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(model.callCount).toBe(0);
    expect(result).toMatchObject({ stopReason: "failed", error: "quota exceeded", finalOutput: null });
    expect(result.termination).toEqual({ type: "error", value: "quota exceeded" });
    expect(kinds(chunks)).toEqual(["run.started", "run.failed", "run.finished"]);
    await runtime.close();
  });
});

describe("chat middleware", () => {
  it("wraps every model call: the request, the client kwargs and the session before next(), the response after", async () => {
    const seen: Record<string, unknown>[] = [];
    const spy: ChatMiddleware = async (ctx, next) => {
      const entry: Record<string, unknown> = {
        step: ctx.step,
        messages: ctx.messages.length,
        tools: ctx.tools?.map((tool) => tool.name),
        kwargs: { ...ctx.kwargs },
        sessionId: ctx.session.id,
        result: ctx.result,
      };
      await next();
      entry.text = ctx.result?.text;
      entry.toolCalls = ctx.result?.toolCalls.map((call) => call.name);
      seen.push(entry);
    };
    const { runtime } = await runtimeWith(ADD_THEN_ANSWER, { middleware: { chat: [spy] } });
    await runtime.runDetailed({
      agentId: "a",
      sessionId: "s",
      inputText: "go",
      clientKwargs: { region: "eu" },
    });
    expect(seen).toEqual([
      {
        step: 1,
        messages: 1,
        tools: ["add"],
        kwargs: { region: "eu" },
        sessionId: "s",
        result: undefined,
        text: "adding",
        toolCalls: ["add"],
      },
      {
        step: 2,
        messages: 3,
        tools: ["add"],
        kwargs: { region: "eu" },
        sessionId: "s",
        result: undefined,
        text: "42",
        toolCalls: [],
      },
    ]);
    await runtime.close();
  });

  it("sends what it changed before next() to the model, for that call only", async () => {
    const shape: ChatMiddleware = async (ctx, next) => {
      if (ctx.step === 1) {
        ctx.messages = [...ctx.messages, { role: "user", content: "Be brief." }];
        ctx.options = { ...ctx.options, temperature: 0 };
        ctx.kwargs.trace = "t-1";
        ctx.tools = undefined;
      }
      await next();
    };
    const { runtime, model } = await runtimeWith(ADD_THEN_ANSWER, { middleware: { chat: [shape] } });
    await runtime.runDetailed({
      agentId: "a",
      sessionId: "s",
      inputText: "go",
      clientKwargs: { region: "eu" },
    });
    const [first, second] = model.requests;
    expect(first!.messages.at(-1)).toEqual({ role: "user", content: "Be brief." });
    expect(first!.options.temperature).toBe(0);
    expect(first!.clientKwargs).toEqual({ region: "eu", trace: "t-1" });
    expect(first!.tools).toBeUndefined();
    expect(second!.clientKwargs).toEqual({ region: "eu" });
    expect(second!.options.temperature).toBeUndefined();
    expect(second!.tools?.map((tool) => tool.name)).toEqual(["add"]);
    // The run's transcript is not what the middleware added.
    expect(
      (await runtime.sessionManager.loadMessages("s")).some((message) => message.content === "Be brief."),
    ).toBe(false);
    await runtime.close();
  });

  it("answers without the model when next() is not called, streaming the answer's text", async () => {
    const cache: ChatMiddleware = (ctx) => {
      ctx.result = { text: "from cache" };
    };
    const { runtime, model } = await runtimeWith([{ text: "never" }], { middleware: { chat: [cache] } });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(model.callCount).toBe(0);
    expect(chunks.filter((chunk) => chunk.kind === "llm.delta").map((chunk) => chunk.payload.text)).toEqual([
      "from cache",
    ]);
    const finished = chunks.find((chunk) => chunk.kind === "llm.finished")!;
    expect(finished.payload).toMatchObject({ model: "mock-scripted", stopReason: "end_turn" });
    expect(chunks.at(-1)!.result).toMatchObject({ finalOutput: "from cache", usage: { llmCalls: 0 } });
    await runtime.close();
  });

  it("runs the tool calls of a response middleware gave", async () => {
    const plan: ChatMiddleware = async (ctx, next) => {
      if (ctx.step === 1) ctx.result = { toolCalls: [{ id: "c1", name: "add", arguments: { a: 1, b: 1 } }] };
      else await next();
    };
    const { runtime, model } = await runtimeWith([{ text: "two" }], { middleware: { chat: [plan] } });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.finalOutput).toBe("two");
    expect(model.callCount).toBe(1);
    expect(toolMessages(model.requests[0]!.messages)).toEqual([
      { role: "tool", toolCallId: "c1", toolName: "add", content: "2" },
    ]);
    await runtime.close();
  });

  it("replaces the response after next(); the transcript keeps the replacement", async () => {
    const shout: ChatMiddleware = async (ctx, next) => {
      await next();
      if (ctx.result !== undefined) ctx.result = { ...ctx.result, text: ctx.result.text.toUpperCase() };
    };
    const { runtime } = await runtimeWith([{ text: "quiet please" }], { middleware: { chat: [shout] } });
    const result = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "go" });
    expect(result.finalOutput).toBe("QUIET PLEASE");
    expect((await runtime.sessionManager.loadMessages("s")).at(-1)).toEqual({
      role: "assistant",
      content: "QUIET PLEASE",
    });
    await runtime.close();
  });

  it("retries a failed model call with a second next(); both calls count, the failure is not reported", async () => {
    const retry: ChatMiddleware = async (_ctx, next) => {
      try {
        await next();
      } catch {
        await next();
      }
    };
    const { runtime, model } = await runtimeWith(
      [{ error: { type: "connection", message: "reset" } }, { text: "ok" }],
      { middleware: { chat: [retry] } },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(model.callCount).toBe(2);
    expect(chunks.at(-1)!.result).toMatchObject({ finalOutput: "ok", usage: { llmCalls: 2 } });
    expect(kinds(chunks)).not.toContain("llm.failed");
    await runtime.close();
  });

  it("reports a failure that leaves the chain as the model call's failure", async () => {
    const { runtime } = await runtimeWith([{ error: { type: "response", message: "bad" } }], {
      middleware: { chat: [async (_ctx: ChatMiddlewareContext, next: () => Promise<void>) => next()] },
    });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(kinds(chunks)).toContain("llm.failed");
    expect(chunks.at(-1)!.result).toMatchObject({ stopReason: "failed", usage: { llmCalls: 1 } });
    await runtime.close();
  });

  it("returns ctx.result on MiddlewareTermination; without any result the call fails with a hint", async () => {
    const stop: ChatMiddleware = () => {
      throw new MiddlewareTermination({ result: { text: "stopped early" } });
    };
    const { runtime, model } = await runtimeWith([{ text: "never" }], { middleware: { chat: [stop] } });
    expect(await runtime.runDetailed({ agentId: "a", inputText: "go" })).toMatchObject({
      finalOutput: "stopped early",
      stopReason: "completed",
    });
    expect(model.callCount).toBe(0);
    await runtime.close();

    const empty = await runtimeWith([{ text: "never" }], {
      middleware: {
        chat: [
          () => {
            throw new MiddlewareTermination();
          },
        ],
      },
    });
    const result = await empty.runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("failed");
    expect(result.errorDetails).toMatchObject({
      code: "middleware.no_result",
      hint: expect.stringContaining("ctx.result"),
    });
    await empty.runtime.close();
  });

  it("keeps streaming the model's deltas through chat middleware", async () => {
    const passThrough: ChatMiddleware = async (ctx, next) => {
      ctx.metadata.started = Date.now();
      await next();
    };
    const { runtime } = await runtimeWith([{ deltas: ["Hel", "lo", " world"] }], {
      middleware: { chat: [passThrough, passThrough] },
    });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(chunks.filter((chunk) => chunk.kind === "llm.delta").map((chunk) => chunk.payload.text)).toEqual([
      "Hel",
      "lo",
      " world",
    ]);
    expect(chunks.at(-1)!.result!.finalOutput).toBe("Hello world");
    await runtime.close();
  });
});

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

describe("middleware in config", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "keel-middleware-"));
    await writeFile(
      path.join(dir, "middleware.mjs"),
      [
        "export async function shout(ctx, next) {",
        "  await next();",
        "  ctx.result = { ...ctx.result, text: ctx.result.text.toUpperCase() };",
        "}",
        "export class Tag {",
        "  constructor(config) { this.tag = config.tag; }",
        "  async process(ctx, next) { ctx.kwargs.tag = this.tag; await next(); }",
        "}",
      ].join("\n"),
    );
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads {"impl": "<module>#<export>"} refs at each level', async () => {
    let kwargs: unknown;
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }, ctx) => {
        kwargs = ctx.kwargs;
        return a + b;
      },
    });
    const model = scriptedModel(ADD_THEN_ANSWER);
    const runtime = await Runtime.fromDict(
      {
        agents: [
          {
            id: "a",
            name: "A",
            llm: model,
            tools: [tool],
            middleware: {
              chat: [{ impl: "./middleware.mjs#shout" }],
              function: [{ impl: "./middleware.mjs#Tag", config: { tag: "from-config" } }],
            },
          },
        ],
      },
      { baseDir: dir },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.finalOutput).toBe("42");
    expect(kwargs).toEqual({ tag: "from-config" });
    expect(model.requests[1]!.messages[1]).toMatchObject({ role: "assistant", content: "ADDING" });
    await runtime.close();
  });

  it("refuses an unknown middleware level with a near match", async () => {
    const config = {
      agents: [{ id: "a", name: "A", middleware: { functions: [{ impl: "./middleware.mjs#shout" }] } }],
    };
    expect(() => parseConfig(config)).toThrow(ConfigValidationError);
    try {
      parseConfig(config);
    } catch (error) {
      expect((error as ConfigValidationError).issues).toEqual([
        {
          path: "agents[0].middleware.functions",
          message: "unknown key 'functions'",
          hint: "Did you mean 'function'?",
        },
      ]);
    }
    await expect(Runtime.fromDict(config, { baseDir: dir })).rejects.toBeInstanceOf(ConfigValidationError);
  });

  it("refuses an entry that is neither middleware nor a ref", () => {
    expect(() =>
      parseConfig({ agents: [{ id: "a", name: "A", middleware: { chat: [{ handle() {} }] } }] }),
    ).toThrow(ConfigValidationError);
  });

  it("takes middleware objects given in code", async () => {
    const seen: string[] = [];
    const { runtime } = await runtimeWith([{ text: "hi" }], {
      middleware: {
        agent: [
          {
            async process(ctx: AgentMiddlewareContext, next: () => Promise<void>) {
              seen.push(ctx.input);
              await next();
            },
          },
        ],
      },
    });
    await runtime.runDetailed({ agentId: "a", inputText: "hello" });
    expect(seen).toEqual(["hello"]);
    await runtime.close();
  });
});
