import { describe, expect, it } from "vitest";
import type { CallCost } from "../models/pricing.js";
import { accumulateUsage } from "./accumulate-usage.js";
import { createRunUsage } from "./run-types.js";

const cost = (costUsd: number | null, input = 0, output = 0, cachedRead = 0, cachedWrite = 0): CallCost => ({
  costUsd,
  breakdown: { input, output, cached_read: cachedRead, cached_write: cachedWrite },
});

describe("accumulateUsage", () => {
  it("starts from zero with a known cost", () => {
    expect(createRunUsage()).toEqual({
      llmCalls: 0,
      toolCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      inputTokensCached: 0,
      inputTokensCacheCreation: 0,
      reasoningTokens: 0,
      costUsd: 0,
      costBreakdown: { input: 0, output: 0, cached_read: 0, cached_write: 0 },
    });
  });

  it("sums tokens, cache tokens, reasoning tokens and cost over calls", () => {
    const usage = createRunUsage();
    accumulateUsage(
      usage,
      {
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 30,
        cacheCreationTokens: 10,
        reasoningTokens: 5,
      },
      cost(1.5, 1, 0.25, 0.125, 0.125),
    );
    accumulateUsage(usage, { inputTokens: 50, outputTokens: 5, totalTokens: 60 }, cost(0.5, 0.25, 0.25));
    expect(usage).toEqual({
      llmCalls: 2,
      toolCalls: 0,
      inputTokens: 150,
      outputTokens: 25,
      totalTokens: 180,
      inputTokensCached: 30,
      inputTokensCacheCreation: 10,
      reasoningTokens: 5,
      costUsd: 2,
      costBreakdown: { input: 1.25, output: 0.5, cached_read: 0.125, cached_write: 0.125 },
    });
  });

  it("counts a call without usage and leaves everything else alone", () => {
    const usage = createRunUsage();
    accumulateUsage(usage, undefined, cost(5, 5));
    expect(usage).toEqual({ ...createRunUsage(), llmCalls: 1 });
  });

  it("adds tokens but not cost when the call has no cost", () => {
    const usage = createRunUsage();
    accumulateUsage(usage, { inputTokens: 7, outputTokens: 3 }, undefined);
    expect(usage.totalTokens).toBe(10);
    expect(usage.costUsd).toBe(0);
  });

  it("keeps the run's cost null once a call's cost is unknown", () => {
    const usage = createRunUsage();
    accumulateUsage(usage, { inputTokens: 1, outputTokens: 1 }, cost(1, 1));
    expect(usage.costUsd).toBe(1);
    accumulateUsage(usage, { inputTokens: 1, outputTokens: 1 }, cost(null, 0.5));
    expect(usage.costUsd).toBeNull();
    accumulateUsage(usage, { inputTokens: 1, outputTokens: 1 }, cost(2, 2));
    expect(usage.costUsd).toBeNull();
    // The breakdown still adds up the parts that were priced.
    expect(usage.costBreakdown.input).toBe(3.5);
    expect(usage.llmCalls).toBe(3);
    expect(usage.inputTokens).toBe(3);
  });
});
