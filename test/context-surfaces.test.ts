import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentMiddleware,
  BaseTool,
  type ChatMiddleware,
  defineTool,
  type FunctionMiddleware,
  type Hook,
  type JsonSchema,
  type ToolContext,
} from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

// One marker per surface: each must show up where it belongs and nowhere else.
const FUNCTION_MARK = "fk-marker-7f3c";
const CLIENT_MARK = "ck-marker-9a1e";
const SESSION_MARK = "sk-marker-2b5d";

function text(value: unknown): string {
  return JSON.stringify(value) ?? "";
}

describe("runtime context surfaces", () => {
  it("keeps functionInvocationKwargs, clientKwargs and session state each on its own surface", async () => {
    const surfaces: Record<string, string> = {};
    const states = new Set<unknown>();
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }, ctx: ToolContext) => {
        surfaces.tool = text({
          kwargs: ctx.kwargs,
          arguments: ctx.arguments,
          runRequest: ctx.runRequest,
          metadata: ctx.metadata,
          inputText: ctx.inputText,
          memoryView: ctx.memoryView,
          transcript: ctx.transcript,
          toolResults: ctx.toolResults,
        });
        surfaces.toolSession = text(ctx.session);
        expect(ctx.session.state).toBe(ctx.state);
        states.add(ctx.session.state);
        ctx.session.state.visits = 1;
        return a + b;
      },
    });
    const agentMiddleware: AgentMiddleware = async (ctx, next) => {
      states.add(ctx.session.state);
      await next();
    };
    const chatMiddleware: ChatMiddleware = async (ctx, next) => {
      surfaces.chat = text({
        kwargs: ctx.kwargs,
        messages: ctx.messages,
        tools: ctx.tools,
        options: ctx.options,
        request: ctx.request,
        metadata: ctx.metadata,
      });
      states.add(ctx.session.state);
      await next();
    };
    const functionMiddleware: FunctionMiddleware = async (ctx, next) => {
      surfaces.function = text({
        kwargs: ctx.kwargs,
        arguments: ctx.arguments,
        runRequest: ctx.runRequest,
        metadata: ctx.metadata,
      });
      await next();
    };
    const hook: Hook = {
      beforeInference: (ctx) => {
        surfaces.hook = text({ runRequest: ctx.run.runRequest, memoryView: ctx.run.memoryView });
        states.add(ctx.run.state);
      },
    };
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("add", { a: 2, b: 40 })] }, { text: "42" }],
      {
        tools: [tool],
        hooks: [hook],
        middleware: { agent: [agentMiddleware], chat: [chatMiddleware], function: [functionMiddleware] },
      },
    );
    await runtime.sessionManager.setState("s", { note: SESSION_MARK });
    const chunks = await collect(
      runtime.stream({
        agentId: "a",
        sessionId: "s",
        inputText: "go",
        functionInvocationKwargs: { token: FUNCTION_MARK },
        clientKwargs: { region: CLIENT_MARK },
      }),
    );
    expect(chunks.at(-1)!.result!.finalOutput).toBe("42");

    // Where each belongs.
    expect(surfaces.tool).toContain(FUNCTION_MARK);
    expect(surfaces.function).toContain(FUNCTION_MARK);
    expect(surfaces.chat).toContain(CLIENT_MARK);
    for (const request of model.requests) expect(request.clientKwargs).toEqual({ region: CLIENT_MARK });
    expect(surfaces.toolSession).toContain(SESSION_MARK);

    // Nowhere else.
    for (const name of ["tool", "function", "toolSession"]) expect(surfaces[name]).not.toContain(CLIENT_MARK);
    expect(surfaces.chat).not.toContain(FUNCTION_MARK);
    expect(surfaces.hook).not.toContain(FUNCTION_MARK);
    expect(surfaces.hook).not.toContain(CLIENT_MARK);
    const modelSaw = text(model.requests);
    expect(modelSaw).not.toContain(FUNCTION_MARK);
    expect(modelSaw).not.toContain(SESSION_MARK);
    for (const [name, value] of Object.entries(surfaces)) {
      if (name !== "toolSession") expect(value, name).not.toContain(SESSION_MARK);
    }
    const stored = text({
      events: chunks,
      state: await runtime.sessionManager.getState("s"),
      messages: await runtime.sessionManager.loadMessages("s"),
    });
    expect(stored).not.toContain(FUNCTION_MARK);
    expect(stored).not.toContain(CLIENT_MARK);

    // One session state object everywhere, and what a tool writes to it is the session's.
    expect(states.size).toBe(1);
    expect(await runtime.sessionManager.getState("s")).toMatchObject({ note: SESSION_MARK, visits: 1 });
    await runtime.close();
  });

  it("shows a tool without function middleware the run's kwargs and no client kwargs", async () => {
    let seen: { kwargs?: unknown; runRequest?: unknown } = {};
    const tool = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }, ctx) => {
        seen = { kwargs: ctx.kwargs, runRequest: ctx.runRequest };
        return a + b;
      },
    });
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("add", { a: 1, b: 2 })] }, { text: "3" }], {
      tools: [tool],
    });
    await runtime.runDetailed({
      agentId: "a",
      inputText: "go",
      functionInvocationKwargs: { token: FUNCTION_MARK },
      clientKwargs: { region: CLIENT_MARK },
    });
    expect(seen.kwargs).toEqual({ token: FUNCTION_MARK });
    expect(seen.runRequest).not.toHaveProperty("functionInvocationKwargs");
    expect(seen.runRequest).not.toHaveProperty("clientKwargs");
    await runtime.close();
  });
});

describe("injected context", () => {
  it("never puts a tool's context parameter into the schema the model receives", async () => {
    class Lookup extends BaseTool<{ key: string }> {
      readonly name = "lookup";
      readonly description = "Look a key up in the session";
      override schema(): JsonSchema {
        return { type: "object", properties: { key: { type: "string" } }, required: ["key"] };
      }
      invoke(params: { key: string }, ctx: ToolContext): unknown {
        return ctx.session.state[params.key] ?? null;
      }
    }
    const add = defineTool({
      name: "add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }, ctx: ToolContext) => (ctx.kwargs.negate ? -(a + b) : a + b),
    });
    const { runtime, model } = await runtimeWith([{ text: "hi" }], { tools: [add, new Lookup()] });
    await runtime.runDetailed({ agentId: "a", inputText: "go" });
    const specs = model.requests[0]!.tools!;
    expect(specs.map((spec) => spec.name)).toEqual(["add", "lookup"]);
    const properties = specs.map((spec) => Object.keys(spec.inputSchema.properties as object));
    expect(properties).toEqual([["a", "b"], ["key"]]);
    for (const spec of specs) {
      expect(text(spec.inputSchema)).not.toMatch(/ctx|context|kwargs|session/i);
    }
    await runtime.close();
  });
});
