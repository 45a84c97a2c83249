import { describe, expect, it } from "vitest";
import {
  type ChatMiddleware,
  type ChatMiddlewareContext,
  MiddlewareTermination,
  type RunStreamChunk,
  type ToolMessage,
} from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

function toolMessages(messages: readonly { role: string }[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => message.role === "tool");
}

function kinds(chunks: readonly RunStreamChunk[]): string[] {
  return chunks.map((chunk) => chunk.kind);
}

const ADD_THEN_ANSWER = [{ text: "adding", toolCalls: [toolCall("add", { a: 2, b: 40 })] }, { text: "42" }];

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
    // The middleware's answer is the transcript's first assistant turn: the model answers with the script's second.
    const { runtime, model } = await runtimeWith([{ text: "never" }, { text: "two" }], {
      middleware: { chat: [plan] },
    });
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
