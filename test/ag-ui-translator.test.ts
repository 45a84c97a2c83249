import { describe, expect, it } from "vitest";
import type { RunStreamChunk } from "../src/index.js";
import { AgUiTranslator } from "../src/server/ag-ui/index.js";

let sequence = 0;
function chunk(
  kind: string,
  payload: Record<string, unknown>,
  result?: Record<string, unknown>,
): RunStreamChunk {
  sequence += 1;
  const header = { runId: "k1", sessionId: "t", agentId: "a", sequence, timestampMs: 1000.5 };
  return {
    ...header,
    kind,
    payload,
    ...(result === undefined ? {} : { result }),
  } as unknown as RunStreamChunk;
}

function cancelledRun(profile: "0.0.59" | "1.0") {
  const translator = new AgUiTranslator({ profile, threadId: "t", runId: "r" });
  const result = { runId: "k1", stopReason: "cancelled", pendingToolCalls: [], finalOutput: null };
  return [
    chunk("step.started", { step: 1 }),
    chunk("llm.reasoning", { text: "hmm" }),
    chunk("llm.delta", { text: "part" }),
    chunk("run.cancelled", {}),
    chunk("run.finished", { result }, result),
  ].flatMap((one) => translator.push(one));
}

describe("AgUiTranslator", () => {
  it("closes reasoning, text and steps before a cancelled run's end: an outcome in 1.0, an error in 0.0.59", () => {
    const modern = cancelledRun("1.0");
    expect(modern.map((event) => event.type)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED",
      "REASONING_START",
      "REASONING_MESSAGE_START",
      "REASONING_MESSAGE_CONTENT",
      "REASONING_MESSAGE_END",
      "REASONING_END",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED",
      "RUN_FINISHED",
    ]);
    expect(modern.at(-1)).toMatchObject({ outcome: { type: "cancelled" }, timestamp: 1000 });
    const legacy = cancelledRun("0.0.59");
    expect(legacy.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "cancelled" });
    expect(legacy[0]).not.toHaveProperty("protocolVersion");
  });

  it("ends a stream cut short with RUN_ERROR after closing what is open, and nothing after the end", () => {
    const translator = new AgUiTranslator({ profile: "0.0.59", threadId: "t", runId: "r" });
    translator.push(chunk("step.started", { step: 1 }));
    translator.push(chunk("llm.delta", { text: "x" }));
    expect(translator.abort("gone").map((event) => event.type)).toEqual([
      "TEXT_MESSAGE_END",
      "STEP_FINISHED",
      "RUN_ERROR",
    ]);
    expect(translator.finished).toBe(true);
    expect(translator.push(chunk("llm.delta", { text: "late" }))).toEqual([]);
    expect(translator.abort("again")).toEqual([]);
  });
});
