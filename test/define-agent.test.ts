import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  ConfigValidationError,
  defineAgent,
  defineTool,
  RunNotCompletedError,
  Runtime,
} from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { collect } from "./support/harness.js";

/** An agent's own `output_type` (code-first): what every run of it is validated against and typed by. */

const Answer = z.object({ sum: z.number() });

describe("defineAgent and an agent's output_type", () => {
  it("returns the definition itself", () => {
    const definition = { id: "m", name: "M" };
    expect(defineAgent(definition)).toBe(definition);
  });

  it("validates a run's output against the agent's output_type, the agent given as agentId", async () => {
    const math = defineAgent({
      id: "math",
      name: "Math",
      output_type: Answer,
      llm: scriptedModel([{ text: "forty-two" }, { text: '{"sum": 42}' }]),
    });
    const runtime = await Runtime.fromDict({ agents: [math] });
    const chunks = await collect(runtime.stream({ agentId: math, inputText: "2 + 40?" }));
    expect(chunks.map((chunk) => chunk.kind)).toContain("validation.retry");
    const finished = chunks.at(-1)!;
    expect(finished.kind === "run.finished" && finished.result.finalOutput).toEqual({ sum: 42 });
    expect(finished.agentId).toBe("math");
    await runtime.close();
  });

  it("applies to runs that name the agent by id, and a request's own outputType wins", async () => {
    const math = defineAgent({
      id: "math",
      name: "Math",
      output_type: Answer,
      llm: scriptedModel([{ text: '{"sum": 42}' }, { text: '{"total": 1}' }]),
    });
    const runtime = await Runtime.fromDict({ agents: [math] });
    expect(await runtime.run({ agentId: "math", inputText: "2 + 40?" })).toEqual({ sum: 42 });
    // Another output type than the agent's is given with the agent's id: named by its definition, the agent's
    // type would have to agree with it.
    const Total = z.object({ total: z.number() });
    expect(await runtime.run({ agentId: "math", inputText: "1?", outputType: Total })).toEqual({ total: 1 });
    await runtime.close();
  });

  it("rejects a run that ends suspended with RunNotCompletedError and the run's result", async () => {
    const pay = defineTool({
      name: "pay",
      description: "Pay",
      approvalMode: "always",
      execute: () => "paid",
    });
    const billing = defineAgent({
      id: "billing",
      name: "Billing",
      output_type: Answer,
      tools: [pay],
      llm: scriptedModel([{ toolCalls: [{ id: "p1", name: "pay", arguments: {} }] }]),
    });
    const runtime = await Runtime.fromDict({ agents: [billing] });
    const error = await runtime
      .run({ agentId: billing, inputText: "pay" })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RunNotCompletedError);
    expect((error as RunNotCompletedError<{ sum: number }>).result).toMatchObject({
      stopReason: "suspended",
      finalOutput: null,
      pendingToolCalls: [{ toolCallId: "p1", toolId: "pay" }],
    });
    await runtime.close();
  });

  it("validates a run resumed by a decision, whose request gives no outputType", async () => {
    const pay = defineTool({
      name: "pay",
      description: "Pay",
      approvalMode: "always",
      execute: () => "paid",
    });
    const billing = defineAgent({
      id: "billing",
      name: "Billing",
      output_type: Answer,
      tools: [pay],
      llm: scriptedModel([{ toolCalls: [{ id: "p1", name: "pay", arguments: {} }] }, { text: '{"sum": 3}' }]),
    });
    const runtime = await Runtime.fromDict({ agents: [billing] });
    const suspended = await runtime.runDetailed({ agentId: billing, inputText: "pay", runId: "r1" });
    expect(suspended.stopReason).toBe("suspended");
    const decided = await runtime.decide({
      runId: "r1",
      decisions: [{ toolCallId: "p1", action: "approve" }],
    });
    expect(decided).toMatchObject({ stopReason: "completed", finalOutput: { sum: 3 } });
    await runtime.close();
  });

  it("refuses an output_type that is not a schema object, as a config file would give it", async () => {
    const config = { agents: [{ id: "a", name: "A", output_type: { type: "object" } }] };
    const error = await Runtime.fromDict(config as never).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConfigValidationError);
    expect((error as ConfigValidationError).issues).toEqual([
      {
        path: "agents[0].output_type",
        message: "not a Standard Schema",
        hint: "Give output_type in code: a zod schema or any other Standard Schema object.",
      },
    ]);
  });
});
