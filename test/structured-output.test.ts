import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  BasePattern,
  ModelRetryError,
  OutputValidationError,
  registerPlugin,
  type StepAction,
} from "../src/index.js";
import { collect, runtimeWith } from "./support/harness.js";

const Answer = z.object({ value: z.string(), confidence: z.number() });

describe("structured output", () => {
  it("parses and validates the final output, fenced JSON included", async () => {
    const { runtime } = await runtimeWith([{ text: '```json\n{"value": "4", "confidence": 0.9}\n```' }]);
    const answer = await runtime.run({ agentId: "a", inputText: "2+2?", outputType: Answer });
    expect(answer).toEqual({ value: "4", confidence: 0.9 });
    await runtime.close();
  });

  it("asks the model for the output type's JSON schema on every call, except the plan of plan_execute", async () => {
    const { runtime, model } = await runtimeWith([
      { toolCalls: [{ id: "c1", name: "add", arguments: { a: 2, b: 2 } }] },
      { text: '{"value": "4", "confidence": 1}' },
    ]);
    await runtime.run({ agentId: "a", inputText: "2+2?", outputType: Answer });
    for (const request of model.requests) {
      expect(request.outputSchema).toMatchObject({
        name: "output",
        schema: { type: "object", required: ["value", "confidence"] },
      });
    }
    const plain = await runtimeWith([{ text: "4" }]);
    await plain.runtime.run({ agentId: "a", inputText: "2+2?" });
    expect(plain.model.requests[0]!.outputSchema).toBeUndefined();

    const planned = await runtimeWith([{ text: "1. answer" }, { text: '{"value": "4", "confidence": 1}' }], {
      pattern: { type: "plan_execute" },
    });
    await planned.runtime.run({ agentId: "a", inputText: "2+2?", outputType: Answer });
    expect(planned.model.requests[0]!.outputSchema).toBeUndefined();
    expect(planned.model.requests[1]!.outputSchema?.name).toBe("output");
  });

  it("retries with the error in scratch and a validation.retry chunk, then succeeds", async () => {
    const { runtime, model } = await runtimeWith([
      { text: '{"value": 4}' },
      { text: '{"value": "4", "confidence": 1}' },
    ]);
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "2+2?", outputType: Answer }));
    const retries = chunks.filter((chunk) => chunk.kind === "validation.retry");
    expect(retries).toHaveLength(1);
    expect(retries[0]!.payload.attempt).toBe(1);
    expect(retries[0]!.payload.error).toBe(
      "The output did not match the expected schema:\n- value: Invalid input: expected string, received number\n- confidence: Invalid input: expected number, received undefined",
    );
    const correction = model.requests[1]!.messages.at(-1)!;
    expect(correction.role).toBe("user");
    expect(String(correction.content)).toContain("Your previous final output failed validation (attempt 1)");
    expect(String(correction.content)).toContain('"confidence":{"type":"number"}');
    expect(chunks.at(-1)!.result!.finalOutput).toEqual({ value: "4", confidence: 1 });
    await runtime.close();
  });

  it("fails with OutputValidationError after maxValidationRetries", async () => {
    const { runtime, model } = await runtimeWith([{ text: "nope" }, { text: "still no" }, { text: "{}" }]);
    const result = await runtime.runDetailed({
      agentId: "a",
      inputText: "?",
      outputType: Answer,
      budget: { maxValidationRetries: 2 },
    });
    expect(model.callCount).toBe(3);
    expect(result.stopReason).toBe("failed");
    expect(result.exception).toBeInstanceOf(OutputValidationError);
    const error = result.exception as OutputValidationError;
    expect(error.attempts).toBe(3);
    expect(error.lastValidationError?.attempt).toBe(3);
    expect(error.outputType).toBe(Answer);
    expect(result.errorDetails?.code).toBe("execution.output_validation");
    await expect(
      (await runtimeWith([{ text: "x" }])).runtime.run({
        agentId: "a",
        inputText: "?",
        outputType: Answer,
        budget: { maxValidationRetries: 0 },
      }),
    ).rejects.toBeInstanceOf(OutputValidationError);
    await runtime.close();
  });

  it("counts a pattern's ModelRetryError against the same budget", async () => {
    let executions = 0;
    class Picky extends BasePattern {
      async react(): Promise<StepAction> {
        const response = await this.callLlm();
        this.recordResponse(response);
        executions++;
        if (response.text !== "good") throw new ModelRetryError(`not good: ${response.text}`);
        return { type: "final", output: response.text };
      }
    }
    registerPlugin("pattern", "picky", () => () => new Picky());
    const { runtime } = await runtimeWith([{ text: "bad" }, { text: "good" }], {
      pattern: { type: "picky" },
    });
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "?" }));
    expect(chunks.find((chunk) => chunk.kind === "validation.retry")!.payload.error).toBe("not good: bad");
    expect(chunks.at(-1)!.result!.finalOutput).toBe("good");
    expect(executions).toBe(2);
    await runtime.close();
  });
});
