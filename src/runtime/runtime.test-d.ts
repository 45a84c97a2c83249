import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../config/keel-config.js";
import type { RunResult } from "../contracts/run-types.js";
import { RunNotCompletedError } from "../errors/error-classes.js";
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

  it("refuses a misspelt request key", async () => {
    // @ts-expect-error `inputTxt`
    await runtime.run({ agentId: "chat", inputTxt: "" });
  });
});
