import { describe, expect, it } from "vitest";
import { nearMatch, similarityRatio } from "./near-match.js";

// Expected values were produced by CPython 3.11: difflib.SequenceMatcher(None, a, b).ratio()
describe("similarityRatio", () => {
  it.each([
    ["max_step", "max_steps", 0.9411764705882353],
    ["max_steps", "max_step", 0.9411764705882353],
    ["abcd", "bcde", 0.75],
    ["tool_executer", "tool_executor", 0.9230769230769231],
    ["agent", "agents", 0.9090909090909091],
    ["qabxcd", "abycdf", 0.6666666666666666],
    ["private Thread currentThread;", "private volatile Thread currentThread;", 0.8656716417910447],
    ["aaaa", "aa", 0.6666666666666666],
    ["", "", 1],
    ["a", "", 0],
    ["abc", "xyz", 0],
  ])("ratio(%j, %j) = %d", (a, b, expected) => {
    expect(similarityRatio(a, b)).toBe(expected);
  });

  it("is not symmetric, exactly like difflib", () => {
    expect(similarityRatio("tide", "diet")).toBe(0.25);
    expect(similarityRatio("diet", "tide")).toBe(0.5);
  });

  it("compares code points, not UTF-16 units", () => {
    expect(similarityRatio("é漢字😀x", "漢字😀y")).toBe(0.6666666666666666);
  });

  it("applies difflib's autojunk heuristic to a second sequence of 200+ elements", () => {
    const a = `${"ab".repeat(150)}xyz`;
    const b = `${"ba".repeat(120)}xyz${"q".repeat(10)}`;
    expect(similarityRatio(a, b)).toBe(0.01079136690647482);
    const a2 = Array.from({ length: 260 }, (_, i) => String.fromCharCode(97 + ((i * 7) % 26))).join("");
    const b2 = Array.from({ length: 250 }, (_, i) => String.fromCharCode(97 + ((i * 11) % 26))).join("");
    expect(similarityRatio(a2, b2)).toBe(0.00392156862745098);
  });
});

describe("nearMatch", () => {
  const runtimeKeys = ["max_steps", "step_timeout_ms", "session_queue_size", "event_queue_size"];

  it("suggests the closest candidate above the cutoff", () => {
    expect(nearMatch("max_step", runtimeKeys)).toBe("max_steps");
    expect(nearMatch("toolz", ["tools", "tool_executor", "memory"])).toBe("tools");
    expect(nearMatch("tool_executer", ["tools", "tool_executor"])).toBe("tool_executor");
  });

  it("returns undefined when nothing reaches the cutoff (default 0.6)", () => {
    expect(nearMatch("xyz", ["tools", "memory"])).toBeUndefined();
    expect(nearMatch("ab", ["ac", "ad", "aa"])).toBeUndefined();
    expect(nearMatch("apple", ["ape", "apply"], { cutoff: 0.9 })).toBeUndefined();
    expect(nearMatch("anything", [])).toBeUndefined();
  });

  it("breaks ties like heapq.nlargest: the greatest candidate string wins", () => {
    expect(nearMatch("ab", ["ac", "ad", "aa"], { cutoff: 0.5 })).toBe("ad");
    expect(nearMatch("ab", ["ad", "ac"], { cutoff: 0.5 })).toBe("ad");
  });

  it("scores ratio(candidate, needle), as get_close_matches does", () => {
    expect(nearMatch("diet", ["tide"], { cutoff: 0.5 })).toBeUndefined();
    expect(nearMatch("tide", ["diet"], { cutoff: 0.5 })).toBe("diet");
  });

  it("accepts a ratio exactly at the cutoff and rejects a cutoff outside [0, 1]", () => {
    expect(nearMatch("abcd", ["bcde"], { cutoff: 0.75 })).toBe("bcde");
    expect(() => nearMatch("a", ["a"], { cutoff: 1.5 })).toThrow(RangeError);
  });
});
