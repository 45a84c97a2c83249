import { describe, expect, it } from "vitest";
import { RunStreamChunkKind } from "../src/index.js";
import { collect, runtimeWith, toolCall } from "./support/harness.js";

describe("streaming", () => {
  it("yields every text delta, gapless sequences from 1, run.finished last with the result", async () => {
    const { runtime } = await runtimeWith([
      { toolCalls: [toolCall("add", { a: 2, b: 40 })] },
      { deltas: ["The ", "answer ", "is 42."] },
    ]);
    const chunks = await collect(runtime.stream({ agentId: "a", sessionId: "s", inputText: "go" }));
    expect(chunks.map((chunk) => chunk.sequence)).toEqual(chunks.map((_chunk, index) => index + 1));
    expect(chunks.filter((chunk) => chunk.kind === "llm.delta").map((chunk) => chunk.payload.text)).toEqual([
      "The ",
      "answer ",
      "is 42.",
    ]);
    const kinds = chunks.map((chunk) => chunk.kind);
    expect(kinds[0]).toBe(RunStreamChunkKind.RUN_STARTED);
    expect(kinds.at(-1)).toBe(RunStreamChunkKind.RUN_FINISHED);
    for (const kind of ["step.started", "llm.finished", "tool.started", "tool.finished", "step.finished"]) {
      expect(kinds).toContain(kind);
    }
    const last = chunks.at(-1)!;
    expect(last.result?.finalOutput).toBe("The answer is 42.");
    expect(last).toMatchObject({ agentId: "a", sessionId: "s", runId: last.result!.runId });
    // As JSON the result is there once, in the payload.
    const json = JSON.parse(JSON.stringify(last));
    expect(json.payload.result.finalOutput).toBe("The answer is 42.");
    expect(json).not.toHaveProperty("result");
    await runtime.close();
  });

  it("filters by kind", async () => {
    const { runtime } = await runtimeWith([{ deltas: ["a", "b"] }]);
    const chunks = await collect(
      runtime.stream({ agentId: "a", inputText: "go" }, { kinds: ["llm.delta", "run.finished"] }),
    );
    expect(chunks.map((chunk) => chunk.kind)).toEqual(["llm.delta", "llm.delta", "run.finished"]);
    await runtime.close();
  });

  it("keeps two concurrent runs on one runtime apart", async () => {
    const script = (word: string) =>
      Array.from({ length: 3 }, (_unused, index) => ({
        deltas: [`${word}${index}`, "-"],
        delayMs: 2,
        toolCalls: index < 2 ? [toolCall("add", { a: index, b: 1 })] : undefined,
      }));
    const { runtime } = await runtimeWith([
      ...script("left").flatMap((turn, index) => [turn, { ...script("right")[index]! }]),
    ]);
    // One model serves both runs in turn; each run must still see only its own events.
    const [left, right] = await Promise.all([
      collect(runtime.stream({ agentId: "a", runId: "left", inputText: "l" })),
      collect(runtime.stream({ agentId: "a", runId: "right", inputText: "r" })),
    ]);
    for (const [runId, chunks] of [
      ["left", left],
      ["right", right],
    ] as const) {
      expect(chunks.every((chunk) => chunk.runId === runId)).toBe(true);
      expect(chunks.map((chunk) => chunk.sequence)).toEqual(chunks.map((_chunk, index) => index + 1));
      expect(chunks.at(-1)!.kind).toBe("run.finished");
    }
    const eventsOnBus = runtime.eventBus.getHistory({ name: "run.finished" });
    expect(eventsOnBus.map((event) => event.runId).sort()).toEqual(["left", "right"]);
    await runtime.close();
  });

  it("a consumer that leaves early detaches; the run goes on to the end", async () => {
    const { runtime } = await runtimeWith([
      { toolCalls: [toolCall("add", { a: 1, b: 1 })] },
      { deltas: ["x", "y"], delayMs: 5 },
    ]);
    for await (const chunk of runtime.stream({ agentId: "a", runId: "r1", inputText: "go" })) {
      if (chunk.kind === "step.started") break;
    }
    const replay = await collect(runtime.attach("r1"));
    expect(replay.at(-1)!.result!.finalOutput).toBe("xy");
    const after = await collect(runtime.attach("r1", { afterSequence: replay.length - 2 }));
    expect(after.map((chunk) => chunk.sequence)).toEqual([replay.length - 1, replay.length]);
    await runtime.close();
  });

  it("attach follows a live run from a sequence, nothing lost, nothing twice", async () => {
    const { runtime } = await runtimeWith([{ deltas: ["a", "b", "c"], delayMs: 20 }]);
    const done = runtime.runDetailed({ agentId: "a", runId: "live", inputText: "go" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const attached = await collect(runtime.attach("live", { afterSequence: 1 }));
    await done;
    expect(attached[0]!.sequence).toBe(2);
    expect(attached.map((chunk) => chunk.sequence)).toEqual(attached.map((_chunk, index) => index + 2));
    expect(attached.at(-1)!.kind).toBe("run.finished");
    await runtime.close();
  });
});

describe("step pairing", () => {
  it("pairs step.started with step.finished on every exit, failures included", async () => {
    const { runtime } = await runtimeWith([
      { toolCalls: [toolCall("add", { a: 1, b: 1 })] },
      { error: { type: "response", message: "bad" } },
    ]);
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const steps = chunks.filter((chunk) => chunk.kind === "step.started" || chunk.kind === "step.finished");
    expect(steps.map((chunk) => `${chunk.kind}:${chunk.payload.step}:${chunk.payload.action ?? ""}`)).toEqual(
      ["step.started:1:", "step.finished:1:continue", "step.started:2:", "step.finished:2:error"],
    );
    await runtime.close();
  });
});
