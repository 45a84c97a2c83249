import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ContextAssembler,
  type ContextAssemblyInput,
  defineTool,
  type RunResult,
  Runtime,
  registerPlugin,
} from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";
import { collect } from "./support/harness.js";

/** A user's context assembler: `assemble` at the start, `finalize` when the run ends. */

class TaggingAssembler implements ContextAssembler {
  readonly finalized: { stopReason: string; sessionId: string; inputText: string }[] = [];
  constructor(private readonly onFinalize?: (result: RunResult) => RunResult | undefined) {}

  async assemble(input: ContextAssemblyInput) {
    return {
      transcript: await input.sessionManager.loadMessages(input.sessionId),
      sessionArtifacts: [],
      metadata: { assembler: "tagging" },
    };
  }

  finalize(input: ContextAssemblyInput, result: RunResult): RunResult | undefined {
    this.finalized.push({
      stopReason: result.stopReason,
      sessionId: input.sessionId,
      inputText: input.request.inputText,
    });
    if (this.onFinalize) return this.onFinalize(result);
    return {
      ...result,
      finalOutput: result.finalOutput === null ? null : `${result.finalOutput} [finalized]`,
      metadata: { ...result.metadata, finalizedBy: "tagging" },
    };
  }
}

let registered = 0;

async function runtimeWith(assembler: ContextAssembler, script: Parameters<typeof scriptedModel>[0]) {
  // A user's assembler, the way a config names one: a registered type.
  const type = `finalize_test_${++registered}`;
  registerPlugin("context_assembler", type, () => assembler);
  const pay = defineTool({
    name: "pay",
    description: "Pay (needs approval)",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }) => `paid ${amount}`,
  });
  return Runtime.fromDict({
    agents: [{ id: "a", name: "A", tools: [pay], llm: scriptedModel(script), context_assembler: { type } }],
  });
}

describe("ContextAssembler.finalize", () => {
  it("post-processes a completed run's result: runDetailed, run() and run.finished give what it returns", async () => {
    const assembler = new TaggingAssembler();
    const runtime = await runtimeWith(assembler, [{ text: "hello" }, { text: "hello" }]);
    try {
      const chunks = await collect(runtime.stream({ agentId: "a", sessionId: "s", inputText: "hi" }));
      const result = chunks.at(-1)!.result!;
      expect(result.finalOutput).toBe("hello [finalized]");
      expect(result.metadata.finalizedBy).toBe("tagging");
      expect(assembler.finalized).toEqual([{ stopReason: "completed", sessionId: "s", inputText: "hi" }]);
      expect(await runtime.run({ agentId: "a", sessionId: "s", inputText: "again" })).toBe(
        "hello [finalized]",
      );
    } finally {
      await runtime.close();
    }
  });

  it("runs on a failed run too, and not on a suspension: there, when the decided run ends", async () => {
    const assembler = new TaggingAssembler();
    const runtime = await runtimeWith(assembler, [
      { toolCalls: [{ id: "p1", name: "pay", arguments: { amount: 5 } }] },
      { text: "paid" },
    ]);
    try {
      const suspended = await runtime.runDetailed({
        agentId: "a",
        sessionId: "s",
        runId: "w",
        inputText: "pay",
      });
      expect(suspended.stopReason).toBe("suspended");
      expect(assembler.finalized).toEqual([]);
      const decided = await runtime.decide({
        runId: "w",
        decisions: [{ toolCallId: "p1", action: "approve" }],
      });
      expect(decided.finalOutput).toBe("paid [finalized]");
      expect(assembler.finalized.map((call) => call.stopReason)).toEqual(["completed"]);
      // The session's transcript holds both scripted turns already: the model has no third one, and fails.
      const failed = await runtime.runDetailed({ agentId: "a", sessionId: "s", inputText: "again" });
      expect(failed.stopReason).toBe("failed");
      expect(failed.metadata.finalizedBy).toBe("tagging");
      expect(assembler.finalized.map((call) => call.stopReason)).toEqual(["completed", "failed"]);
    } finally {
      await runtime.close();
    }
  });

  it("returning nothing keeps the result; a finalize that throws fails the run with its error", async () => {
    const keeping = new TaggingAssembler(() => undefined);
    const runtime = await runtimeWith(keeping, [{ text: "as is" }]);
    try {
      expect(await runtime.run({ agentId: "a", inputText: "hi" })).toBe("as is");
    } finally {
      await runtime.close();
    }
    const throwing = new TaggingAssembler(() => {
      throw new Error("cannot post-process");
    });
    const broken = await runtimeWith(throwing, [{ text: "lost" }]);
    try {
      const result = await broken.runDetailed({ agentId: "a", runId: "b", inputText: "hi" });
      expect(result).toMatchObject({ stopReason: "failed", finalOutput: null });
      expect(result.errorDetails).toMatchObject({ code: "context.finalize" });
      expect(result.error).toContain("cannot post-process");
      expect(await broken.getRun("b")).toMatchObject({ status: "done", stopReason: "failed" });
    } finally {
      await broken.close();
    }
  });
});
