import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentMiddleware,
  type AgentMiddlewareContext,
  type ChatMiddleware,
  ConfigValidationError,
  defineTool,
  type FunctionMiddleware,
  MiddlewareTermination,
  parseConfig,
  type RunStreamChunk,
  Runtime,
  type ToolContext,
  type ToolMessage,
} from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

function _toolMessages(messages: readonly { role: string }[]): ToolMessage[] {
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
    // The policy is computed when the run starts, before agent middleware decides anything.
    expect(kinds(chunks)).toEqual([
      "run.started",
      "permissions.computed",
      "session.acquired",
      "run.finished",
    ]);
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
    expect(kinds(chunks)).toEqual([
      "run.started",
      "permissions.computed",
      "session.acquired",
      "run.failed",
      "run.finished",
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
    // A config from outside the type system (JSON): the misspelt level is refused when it loads.
    await expect(Runtime.fromDict(config as never, { baseDir: dir })).rejects.toBeInstanceOf(
      ConfigValidationError,
    );
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
