import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { type DefinedAgent, defineAgent } from "../config/keel-config.js";
import type { RunResult } from "../contracts/run-types.js";
import type { ToolContext } from "../contracts/tool.js";
import { RunNotCompletedError } from "../errors/error-classes.js";
import { defineTool } from "../tools/define-tool.js";
import type { Runtime } from "./runtime.js";
import type { RunStreamChunk } from "./stream-chunk.js";

declare const runtime: Runtime;
const Answer = z.object({ sum: z.number() });
const math = defineAgent({ id: "math", name: "Math", output_type: Answer });
const chat = defineAgent({ id: "chat", name: "Chat" });

describe("Runtime's results are typed by the run's output type", () => {
  it("from the request's outputType", async () => {
    expectTypeOf(await runtime.run({ agentId: "math", inputText: "", outputType: Answer })).toEqualTypeOf<{
      sum: number;
    }>();
    const detailed = await runtime.runDetailed({ agentId: "math", inputText: "", outputType: Answer });
    expectTypeOf(detailed).toEqualTypeOf<RunResult<{ sum: number }>>();
  });

  it("from a defineAgent agent given as agentId", async () => {
    expectTypeOf(await runtime.run({ agentId: math, inputText: "" })).toEqualTypeOf<{ sum: number }>();
    expectTypeOf((await runtime.runDetailed({ agentId: math, inputText: "" })).finalOutput).toEqualTypeOf<{
      sum: number;
    } | null>();
    for await (const chunk of runtime.stream({ agentId: math, inputText: "" })) {
      if (chunk.kind === "run.finished")
        expectTypeOf(chunk.result.finalOutput).toEqualTypeOf<{ sum: number } | null>();
    }
  });

  it("refuses a request's outputType that disagrees with the agent's, the agent given as agentId", async () => {
    const Total = z.object({ total: z.number() });
    // @ts-expect-error the agent's output_type and the request's must agree; name the agent by id to override
    await runtime.run({ agentId: math, inputText: "", outputType: Total });
    expectTypeOf(await runtime.run({ agentId: "math", inputText: "", outputType: Total })).toEqualTypeOf<{
      total: number;
    }>();
  });

  it("a string without an output type", async () => {
    expectTypeOf(await runtime.run({ agentId: "chat", inputText: "" })).toEqualTypeOf<string>();
    expectTypeOf(await runtime.run({ agentId: chat, inputText: "" })).toEqualTypeOf<string>();
    expectTypeOf(runtime.stream({ agentId: "chat", inputText: "" })).toEqualTypeOf<
      AsyncIterableIterator<RunStreamChunk<string>>
    >();
  });

  it("RunNotCompletedError carries the typed result", () => {
    const error = new RunNotCompletedError<{ sum: number }>("m", {
      result: {} as RunResult<{ sum: number }>,
    });
    expectTypeOf(error.result.finalOutput).toEqualTypeOf<{ sum: number } | null>();
    expectTypeOf(
      new RunNotCompletedError("m", { result: {} as RunResult }).result,
    ).toEqualTypeOf<RunResult>();
  });

  it("narrows a stream filtered by kinds, and refuses a kind Keel does not declare", async () => {
    for await (const chunk of runtime.stream({ agentId: "chat", inputText: "" }, { kinds: ["llm.delta"] })) {
      expectTypeOf(chunk.kind).toEqualTypeOf<"llm.delta" | "run.finished">();
      if (chunk.kind === "llm.delta") expectTypeOf(chunk.payload.text).toEqualTypeOf<string>();
    }
    // @ts-expect-error a misspelt kind in the filter
    runtime.stream({ agentId: "chat", inputText: "" }, { kinds: ["llm.detla"] });
    // @ts-expect-error attach's filter too
    runtime.attach("run-1", { kinds: ["tool.complete"] });
  });

  it("checks a run's deps against what a defineAgent agent's tools read", async () => {
    const lookup = defineTool({
      name: "lookup",
      description: "",
      execute: (_input, ctx: ToolContext<{ db: string }>) => ctx.deps.db,
    });
    const plain = defineTool({ name: "plain", description: "", execute: () => 1 });
    const agent = defineAgent({ id: "d", name: "D", tools: [lookup, plain] });
    expectTypeOf(agent).toEqualTypeOf<DefinedAgent<string, { db: string }>>();
    await runtime.run({ agentId: agent, inputText: "", deps: { db: "main" } });
    // @ts-expect-error `db` is a string
    await runtime.run({ agentId: agent, inputText: "", deps: { db: 1 } });
    // @ts-expect-error a misspelt dependency
    await runtime.run({ agentId: agent, inputText: "", deps: { dbb: "main" } });
    // Named by id, the run's deps are not checked.
    await runtime.run({ agentId: "d", inputText: "", deps: { anything: true } });
  });

  it("asks for the agent's deps type when its tools read different deps", () => {
    const lookup = defineTool({
      name: "l",
      description: "",
      execute: (_i, _ctx: ToolContext<{ db: string }>) => 1,
    });
    const whoami = defineTool({
      name: "w",
      description: "",
      execute: (_i, _ctx: ToolContext<{ user: string }>) => 1,
    });
    // @ts-expect-error one tool reads `db`, the other `user`: say what the agent's runs give
    defineAgent({ id: "d", name: "D", tools: [lookup, whoami] });
    const both = defineAgent<string, { db: string; user: string }>({
      id: "d",
      name: "D",
      tools: [lookup, whoami],
    });
    expectTypeOf(both).toEqualTypeOf<DefinedAgent<string, { db: string; user: string }>>();
  });

  it("refuses a misspelt request key", async () => {
    // @ts-expect-error `inputTxt`
    await runtime.run({ agentId: "chat", inputTxt: "" });
  });
});
