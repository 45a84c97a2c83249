import { describe, expect, it } from "vitest";
import type { RunResult } from "../../contracts/run-types.js";
import { renderTimeline } from "./render-timeline.js";
import { RunTimeline, type TimelineEvent } from "./run-timeline.js";

/** A run's events with fixed times: the timeline's figures and bars follow from them alone. */

const plain = (_format: unknown, text: string) => text;

function usage(costUsd: number | null, inputTokens = 0, outputTokens = 0) {
  return {
    llmCalls: 0,
    toolCalls: 0,
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    inputTokensCached: 0,
    inputTokensCacheCreation: 0,
    reasoningTokens: 0,
    costUsd,
    costBreakdown: { input: 0, output: 0, cachedRead: 0, cachedWrite: 0 },
  };
}

function result(stopReason: RunResult["stopReason"], costUsd: number | null): RunResult {
  return {
    runId: "r",
    finalOutput: null,
    stopReason,
    termination: { type: "natural_end" },
    pendingToolCalls: [],
    usage: usage(costUsd, 3000, 300),
    artifacts: [],
    metadata: { steps: 2 },
  };
}

const at = (timestampMs: number, kind: string, payload: Record<string, unknown> = {}): TimelineEvent => ({
  kind,
  timestampMs,
  payload,
});

/** Step 1: a 400 ms model call, a 400 ms tool call; a suspension; an hour's wait; step 2 after the decision. */
const SUSPENDED_THEN_RESUMED: TimelineEvent[] = [
  at(1000, "run.started", { resumed: false }),
  at(1000, "step.started", { step: 1 }),
  at(1000, "llm.called", { model: "gpt-4o", hasTools: true }),
  at(1400, "llm.finished", {
    model: "gpt-4o",
    usage: { inputTokens: 1000, outputTokens: 100 },
    stopReason: "tool_use",
    durationMs: 400,
  }),
  at(1400, "usage.updated", { usage: usage(0.003, 1000, 100) }),
  at(1400, "tool.started", { toolCallId: "c1", toolId: "add", params: { a: 2, b: 40 } }),
  at(1800, "tool.completed", { toolCallId: "c1", toolId: "add", result: 42, durationMs: 400 }),
  at(1800, "tool.suspended", {
    toolCallId: "p1",
    toolId: "pay",
    params: { amount: 10 },
    resumeMode: "replay_tool_call",
  }),
  at(1800, "step.finished", { step: 1 }),
  at(1800, "run.finished", { result: result("suspended", 0.003) }),
  at(3_601_800, "run.started", { resumed: true }),
  at(3_601_800, "tool.decision", { toolCallId: "p1", toolId: "pay", action: "approve" }),
  at(3_601_800, "step.started", { step: 2, resumed: true }),
  at(3_601_800, "tool.started", { toolCallId: "p1", toolId: "pay", params: { amount: 10 } }),
  at(3_601_800, "tool.failed", { toolCallId: "p1", toolId: "pay", error: "card declined", durationMs: 0.5 }),
  at(3_601_800, "llm.called", { model: "gpt-4o", hasTools: true }),
  at(3_602_000, "llm.failed", {
    model: "gpt-4o",
    error: "overloaded",
    errorDetails: { code: "llm.rate_limit" },
  }),
  at(3_602_000, "run.failed", {
    error: "overloaded",
    errorDetails: { code: "llm.rate_limit", message: "overloaded", hint: "Wait and resume the run" },
  }),
  at(3_602_000, "run.finished", { result: result("failed", 0.003) }),
];

describe("RunTimeline", () => {
  it("leaves the wait for a decision out of the time axis and marks it", () => {
    const timeline = new RunTimeline();
    for (const event of SUSPENDED_THEN_RESUMED) timeline.add(event);
    const view = timeline.view();
    expect(view.activeMs).toBe(1000);
    expect(view.elapsedMs).toBe(3_601_000);
    expect(view.steps).toBe(2);
    expect(
      view.items.map((item) =>
        item.kind === "mark" ? `${item.mark}@${item.atMs}` : `${item.kind}@${item.startMs}-${item.endMs}`,
      ),
    ).toEqual([
      "step@0-800",
      "model@0-400",
      "tool@400-800",
      "suspended@800",
      "waited@800",
      "resumed@800",
      "decision@800",
      "step@800-800",
      "tool@800-800",
      "model@800-1000",
      "failed@1000",
    ]);
  });

  it("gives each model call and step the cost the run's total grew by", () => {
    const timeline = new RunTimeline();
    const finished = SUSPENDED_THEN_RESUMED.map((event) => timeline.add(event)).filter(Boolean);
    expect(finished).toMatchObject([
      { step: 1, durationMs: 800, inputTokens: 1000, outputTokens: 100, costUsd: 0.003 },
    ]);
    const [model] = timeline.view().items.filter((item) => item.kind === "model");
    expect(model).toMatchObject({ costUsd: 0.003, stopReason: "tool_use", durationMs: 400 });
  });

  it("does not guess the cost of a stream that starts with a resumed run", () => {
    const timeline = new RunTimeline();
    for (const event of SUSPENDED_THEN_RESUMED.slice(10)) timeline.add(event);
    timeline.add(at(3_602_100, "usage.updated", { usage: usage(0.005) }));
    expect(
      timeline
        .view()
        .items.filter((item) => item.kind === "step")
        .map((step) => step.costUsd),
    ).toEqual([null]);
  });
});

describe("renderTimeline", () => {
  it("draws bars placed by start and sized by duration, with figures, marks and the error's hint", () => {
    const timeline = new RunTimeline();
    for (const event of SUSPENDED_THEN_RESUMED) timeline.add(event);
    const lines = renderTimeline(timeline.view(), { paint: plain, barWidth: 20 });
    expect(lines).toEqual([
      "failed · 2 steps · 1.00 s · 1 h 0 min with waits · 3k in / 300 out · $0.003",
      "                          0             1.00 s",
      "step 1                    ████████████████····  800 ms · 1k in / 100 out · $0.003",
      "  chat gpt-4o             ████████············  400 ms · 1k in / 100 out · $0.003 · tool_use",
      '  add                     ········████████····  400 ms {"a":2,"b":40} → 42',
      "⏸ pay (p1) awaits a decision",
      "┄ waited for a decision: 1 h 0 min (left out of the time axis)",
      "▶ resumed",
      "✔ approve pay (p1)",
      "step 2                    ················█···  0.0 ms · 0 in / 0 out · $0 · unfinished",
      '  pay                     ················█···  0.5 ms {"amount":10} ✗ card declined',
      "  chat gpt-4o             ················████  ✗ overloaded",
      "✗ llm.rate_limit: overloaded",
      "  hint: Wait and resume the run",
    ]);
  });
});
