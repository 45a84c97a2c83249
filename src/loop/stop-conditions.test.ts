import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  createStopConditions,
  type StepFacts,
  type StopConditionSpec,
  stepSignature,
} from "./stop-conditions.js";

function facts(overrides: Partial<StepFacts> = {}): StepFacts {
  return {
    steps: 1,
    elapsedMs: 0,
    totalTokens: 0,
    consecutiveErrors: 0,
    lastText: "",
    requestedTools: [],
    recentSignatures: [],
    ...overrides,
  };
}

const evaluate = (spec: StopConditionSpec, overrides: Partial<StepFacts>) =>
  createStopConditions([spec]).evaluate(facts(overrides));

describe("stop conditions", () => {
  it("max_rounds fires when the step count reaches rounds", () => {
    const spec: StopConditionSpec = { type: "max_rounds", rounds: 3 };
    expect(evaluate(spec, { steps: 2 })).toBeNull();
    expect(evaluate(spec, { steps: 3 })).toEqual({ type: "max_rounds", detail: "reached 3 rounds" });
    expect(evaluate(spec, { steps: 4 })).toEqual({ type: "max_rounds", detail: "reached 3 rounds" });
  });

  it("timeout fires once the elapsed time exceeds the seconds", () => {
    const spec: StopConditionSpec = { type: "timeout", seconds: 2 };
    expect(evaluate(spec, { elapsedMs: 1999 })).toBeNull();
    expect(evaluate(spec, { elapsedMs: 2000 })).toBeNull();
    expect(evaluate(spec, { elapsedMs: 2001 })).toEqual({ type: "timeout", detail: "ran longer than 2 s" });
    expect(evaluate({ type: "timeout", seconds: 0.5 }, { elapsedMs: 501 })).toEqual({
      type: "timeout",
      detail: "ran longer than 0.5 s",
    });
  });

  it("token_budget fires once the total exceeds max_total", () => {
    const spec: StopConditionSpec = { type: "token_budget", max_total: 100 };
    expect(evaluate(spec, { totalTokens: 99 })).toBeNull();
    expect(evaluate(spec, { totalTokens: 100 })).toBeNull();
    expect(evaluate(spec, { totalTokens: 101 })).toEqual({
      type: "token_budget",
      detail: "used 101 of 100 tokens",
    });
  });

  it("consecutive_errors fires when the count reaches max", () => {
    const spec: StopConditionSpec = { type: "consecutive_errors", max: 3 };
    expect(evaluate(spec, { consecutiveErrors: 2 })).toBeNull();
    expect(evaluate(spec, { consecutiveErrors: 3 })).toEqual({
      type: "consecutive_errors",
      detail: "3 failed steps in a row",
    });
  });

  it("stop_on_tool fires when the step asked for that tool", () => {
    const spec: StopConditionSpec = { type: "stop_on_tool", tool_name: "finish" };
    expect(evaluate(spec, { requestedTools: ["search", "finisher"] })).toBeNull();
    expect(evaluate(spec, { requestedTools: ["search", "finish"] })).toEqual({
      type: "stop_on_tool",
      detail: "tool finish was requested",
    });
  });

  it("content_match fires when the last text matches the pattern", () => {
    const spec: StopConditionSpec = { type: "content_match", pattern: "FINAL ANSWER:\\s*\\d+" };
    expect(evaluate(spec, { lastText: "thinking about it" })).toBeNull();
    expect(evaluate(spec, { lastText: "FINAL ANSWER: 42" })).toEqual({
      type: "content_match",
      detail: "output matched /FINAL ANSWER:\\s*\\d+/",
    });
  });

  it("content_match gives the same answer for the same text every time", () => {
    const evaluator = createStopConditions([{ type: "content_match", pattern: "done" }]);
    expect(evaluator.evaluate(facts({ lastText: "done" }))).not.toBeNull();
    expect(evaluator.evaluate(facts({ lastText: "done" }))).not.toBeNull();
  });

  it("content_match with an invalid pattern throws when compiled", () => {
    expect(() => createStopConditions([{ type: "content_match", pattern: "(" }])).toThrow(SyntaxError);
  });

  it("is disabled by a zero or empty limit", () => {
    const extreme = facts({
      steps: 1000,
      elapsedMs: 1e9,
      totalTokens: 1e9,
      consecutiveErrors: 1000,
      lastText: "anything",
      requestedTools: [""],
      recentSignatures: ["x", "x", "x"],
    });
    const disabled: StopConditionSpec[] = [
      { type: "max_rounds", rounds: 0 },
      { type: "timeout", seconds: 0 },
      { type: "token_budget", max_total: 0 },
      { type: "consecutive_errors", max: 0 },
      { type: "stop_on_tool", tool_name: "" },
      { type: "content_match", pattern: "" },
      { type: "loop_detection", window: 0 },
      { type: "loop_detection", window: 1 },
    ];
    for (const spec of disabled) expect(createStopConditions([spec]).evaluate(extreme)).toBeNull();
    expect(createStopConditions(disabled).signatureWindow).toBe(0);
    expect(createStopConditions([]).evaluate(extreme)).toBeNull();
  });

  it("returns the first condition that fires, in config order", () => {
    const both = facts({ steps: 5, totalTokens: 500 });
    expect(
      createStopConditions([
        { type: "token_budget", max_total: 100 },
        { type: "max_rounds", rounds: 5 },
      ]).evaluate(both),
    ).toEqual({ type: "token_budget", detail: "used 500 of 100 tokens" });
    expect(
      createStopConditions([
        { type: "max_rounds", rounds: 5 },
        { type: "token_budget", max_total: 100 },
      ]).evaluate(both),
    ).toEqual({ type: "max_rounds", detail: "reached 5 rounds" });
    expect(
      createStopConditions([
        { type: "max_rounds", rounds: 10 },
        { type: "token_budget", max_total: 100 },
      ]).evaluate(both),
    ).toEqual({ type: "token_budget", detail: "used 500 of 100 tokens" });
  });

  describe("loop_detection", () => {
    it("asks the loop to keep the largest window of signatures", () => {
      expect(createStopConditions([{ type: "loop_detection", window: 3 }]).signatureWindow).toBe(3);
      expect(
        createStopConditions([
          { type: "loop_detection", window: 4 },
          { type: "loop_detection", window: 2 },
          { type: "max_rounds", rounds: 9 },
        ]).signatureWindow,
      ).toBe(4);
      expect(createStopConditions([{ type: "max_rounds", rounds: 9 }]).signatureWindow).toBe(0);
    });

    it("fires when the last window steps issued identical tool calls, key order aside", () => {
      const spec: StopConditionSpec = { type: "loop_detection", window: 3 };
      const a = stepSignature("", [{ name: "search", arguments: { q: "x", page: 1 } }]);
      const b = stepSignature("other text", [{ name: "search", arguments: { page: 1, q: "x" } }]);
      expect(a).toBe(b);
      expect(evaluate(spec, { recentSignatures: [a, b] })).toBeNull();
      expect(evaluate(spec, { recentSignatures: [a, b, a] })).toEqual({
        type: "loop_detection",
        detail: "the last 3 steps were identical",
      });
    });

    it("does not fire when the arguments or names differ", () => {
      const spec: StopConditionSpec = { type: "loop_detection", window: 2 };
      const one = stepSignature("", [{ name: "search", arguments: { q: "x" } }]);
      const two = stepSignature("", [{ name: "search", arguments: { q: "y" } }]);
      const three = stepSignature("", [{ name: "find", arguments: { q: "x" } }]);
      expect(evaluate(spec, { recentSignatures: [one, two] })).toBeNull();
      expect(evaluate(spec, { recentSignatures: [one, three] })).toBeNull();
    });

    it("fires for identical texts without tool calls", () => {
      const spec: StopConditionSpec = { type: "loop_detection", window: 2 };
      const text = stepSignature("I am stuck", []);
      expect(evaluate(spec, { recentSignatures: [text, stepSignature("I am stuck", [])] })).toEqual({
        type: "loop_detection",
        detail: "the last 2 steps were identical",
      });
      expect(evaluate(spec, { recentSignatures: [text, stepSignature("I am stuck!", [])] })).toBeNull();
    });

    it("looks only at the last window signatures", () => {
      const spec: StopConditionSpec = { type: "loop_detection", window: 3 };
      expect(evaluate(spec, { recentSignatures: ["a", "b", "b", "b"] })).toEqual({
        type: "loop_detection",
        detail: "the last 3 steps were identical",
      });
      expect(evaluate(spec, { recentSignatures: ["b", "b", "a", "b"] })).toBeNull();
      expect(evaluate(spec, { recentSignatures: ["b", "b"] })).toBeNull();
    });
  });
});

describe("stepSignature", () => {
  it("is the text without tool calls and the calls (names and arguments) otherwise", () => {
    expect(stepSignature("hello", [])).toBe("text:hello");
    expect(
      stepSignature("ignored", [
        { name: "a", arguments: { z: 1, y: [2, { d: 1, c: 2 }] } },
        { name: "b", arguments: {} },
      ]),
    ).toBe('tools:a({"y":[2,{"c":2,"d":1}],"z":1});b({});');
  });

  it("keeps the order of the calls", () => {
    const ab = stepSignature("", [
      { name: "a", arguments: {} },
      { name: "b", arguments: {} },
    ]);
    const ba = stepSignature("", [
      { name: "b", arguments: {} },
      { name: "a", arguments: {} },
    ]);
    expect(ab).not.toBe(ba);
  });

  it("does not confuse a text with a tool call", () => {
    expect(stepSignature("tools:a({});", [])).not.toBe(stepSignature("", [{ name: "a", arguments: {} }]));
  });
});

describe("canonicalJson", () => {
  it("sorts object keys at every level and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: null } })).toBe('{"a":{"c":null,"d":[3,1]},"b":1}');
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
  });

  it("writes scalars as JSON and undefined as null", () => {
    expect(canonicalJson("x")).toBe('"x"');
    expect(canonicalJson(1.5)).toBe("1.5");
    expect(canonicalJson(true)).toBe("true");
    expect(canonicalJson(null)).toBe("null");
    expect(canonicalJson(undefined)).toBe("null");
    expect(canonicalJson({ 'we"ird': 1 })).toBe('{"we\\"ird":1}');
  });
});
