import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { answerText, applyChunk, createRunModel } from "../console/src/run-model.js";
import type { Chunk } from "../console/src/wire-types.js";
import { defineTool, type RunStreamChunk, Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";

/**
 * How the console folds a run's events into what it draws: rows for steps, model calls, tool calls, suspensions,
 * decisions and errors, the answer, the calls waiting; and every event once, however often it arrives.
 */

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

async function payRun() {
  const pay = defineTool({
    name: "pay",
    description: "Pay",
    inputSchema: z.object({ amount: z.number() }),
    approvalMode: "always",
    execute: ({ amount }) => ({ paid: amount }),
  });
  const runtime = await Runtime.fromDict({
    agents: [
      {
        id: "payer",
        name: "Payer",
        tools: [pay],
        llm: scriptedModel([
          {
            toolCalls: [{ id: "c1", name: "pay", arguments: { amount: 5 } }],
            usage: { inputTokens: 10, outputTokens: 2 },
          },
          { deltas: ["Paid ", "5."], usage: { inputTokens: 12, outputTokens: 3 } },
        ]),
      },
    ],
  });
  runtimes.push(runtime);
  const first = await runtime.runDetailed({ agentId: "payer", inputText: "pay" });
  return { runtime, runId: first.runId };
}

/**
 * A stream's chunks, to its first `run.finished` unless `whole` (a waiting run's stream would go on into its
 * continuation).
 */
const chunksOf = async (chunks: AsyncIterable<RunStreamChunk>, whole = false) => {
  const all: Chunk[] = [];
  for await (const chunk of chunks) {
    all.push(chunk as unknown as Chunk);
    if (chunk.kind === "run.finished" && !whole) break;
  }
  return all;
};

describe("the console's run model", () => {
  it("waits on a suspended call, then draws the decision and the rest of the run", async () => {
    const { runtime, runId } = await payRun();
    const model = createRunModel(runId);
    for (const chunk of await chunksOf(runtime.attach(runId))) applyChunk(model, chunk);
    expect(model.phase).toBe("waiting");
    expect(model.pending.map((call) => call.toolCallId)).toEqual(["c1"]);
    expect(model.checkpoints).toHaveLength(1);

    await runtime.decide({ runId, decisions: [{ toolCallId: "c1", action: "approve", always: true }] });
    for (const chunk of await chunksOf(runtime.attach(runId, { afterSequence: model.lastSequence })))
      applyChunk(model, chunk);
    expect(model.phase).toBe("finished");
    expect(model.pending).toEqual([]);
    expect(answerText(model)).toBe("Paid 5.");
    expect(model.tokens).toBe(27);
    expect(model.spans.map((span) => [span.kind, span.label, span.state])).toEqual([
      ["step", "Step 1", "ok"],
      ["model", "mock-scripted", "ok"],
      ["suspension", "pay", "ok"],
      ["decision", "approve pay", "ok"],
      ["step", "Step 1 (resumed)", "ok"],
      ["tool", "pay", "ok"],
      ["step", "Step 2", "ok"],
      ["model", "mock-scripted", "ok"],
    ]);
    // Every row has an end once the run is over, so the axis ends with the run.
    expect(model.spans.every((span) => span.end !== null && span.end >= span.start)).toBe(true);
    expect(new Set(model.spans.map((span) => span.key)).size).toBe(model.spans.length);
    expect(model.spans.find((span) => span.kind === "tool")!.detail).toMatchObject({
      arguments: { amount: 5 },
      result: { paid: 5 },
    });
    expect(model.spans.find((span) => span.kind === "decision")!.note).toBe("decided · always");
  });

  it("holds each event once when a re-attach sends some again", async () => {
    const { runtime, runId } = await payRun();
    await runtime.decide({ runId, decisions: [{ toolCallId: "c1", action: "deny" }] });
    const all = await chunksOf(runtime.attach(runId), true);
    const model = createRunModel(runId);
    for (const chunk of all.slice(0, 20)) applyChunk(model, chunk);
    // The connection dropped after the 20th event and the client re-attached from the 15th.
    for (const chunk of all.slice(15)) applyChunk(model, chunk);
    expect(model.duplicates).toBe(5);
    expect(model.events.map((chunk) => chunk.sequence)).toEqual(all.map((chunk) => chunk.sequence));
    expect(model.spans.find((span) => span.kind === "decision")!.state).toBe("denied");
    expect(model.spans.find((span) => span.kind === "suspension")!.state).toBe("denied");
  });

  it("marks a failed run with its error and code", async () => {
    const runtime = await Runtime.fromDict({
      agents: [
        { id: "a", name: "A", llm: scriptedModel([{ error: { type: "response", message: "bad key" } }]) },
      ],
    });
    runtimes.push(runtime);
    const result = await runtime.runDetailed({ agentId: "a", inputText: "x" });
    const model = createRunModel(result.runId);
    for (const chunk of await chunksOf(runtime.attach(result.runId))) applyChunk(model, chunk);
    expect(model.result?.stopReason).toBe("failed");
    const error = model.spans.filter((span) => span.kind === "error").at(-1)!;
    expect(error.state).toBe("error");
    expect(error.label).toContain("bad key");
    expect(error.detail).toMatchObject({ code: "llm.response" });
  });
});
