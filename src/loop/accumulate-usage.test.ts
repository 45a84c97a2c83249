import { describe, expect, it } from "vitest";
import { createRunUsage } from "../contracts/run-types.js";
import { computeCost, type ModelPricing } from "../models/pricing.js";
import { accumulateUsage } from "./accumulate-usage.js";

const SONNET: ModelPricing = { input: 3, output: 15, cached_read: 0.3, cached_write: 3.75 };

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
      costBreakdown: { input: 0, output: 0, cachedRead: 0, cachedWrite: 0 },
    });
  });

  it("sums tokens, cache tokens, reasoning tokens and cost over calls", () => {
    const usage = createRunUsage();
    accumulateUsage(
      usage,
      {
        inputTokens: 1_000_000,
        outputTokens: 100_000,
        cacheReadTokens: 200_000,
        cacheCreationTokens: 100_000,
        reasoningTokens: 5,
      },
      SONNET,
    );
    accumulateUsage(usage, { inputTokens: 50, outputTokens: 5, totalTokens: 60 }, SONNET);
    expect(usage.llmCalls).toBe(2);
    expect(usage.inputTokens).toBe(1_000_050);
    expect(usage.outputTokens).toBe(100_005);
    expect(usage.totalTokens).toBe(1_100_000 + 60);
    expect(usage.inputTokensCached).toBe(200_000);
    expect(usage.inputTokensCacheCreation).toBe(100_000);
    expect(usage.reasoningTokens).toBe(5);
    // 700k plain input × 3 + 100k output × 15 + 200k read × 0.3 + 100k write × 3.75, per million; then 50 in / 5 out.
    expect(usage.costBreakdown.input).toBeCloseTo(2.1 + 0.00015, 10);
    expect(usage.costBreakdown.output).toBeCloseTo(1.5 + 0.000075, 10);
    expect(usage.costBreakdown.cachedRead).toBeCloseTo(0.06, 10);
    expect(usage.costBreakdown.cachedWrite).toBeCloseTo(0.375, 10);
    expect(usage.costUsd).toBeCloseTo(2.1 + 1.5 + 0.06 + 0.375 + 0.000225, 10);
  });

  it("agrees with computeCost for one call", () => {
    const call = {
      inputTokens: 12_345,
      outputTokens: 678,
      cacheReadTokens: 1_000,
      cacheCreationTokens: 2_000,
    };
    const usage = createRunUsage();
    accumulateUsage(usage, call, SONNET);
    const single = computeCost(call, SONNET);
    expect(usage.costUsd).toBeCloseTo(single.costUsd!, 12);
    expect(usage.costBreakdown).toEqual(single.breakdown);
  });

  it("counts a call without usage and leaves the totals", () => {
    const usage = createRunUsage();
    accumulateUsage(usage, undefined, SONNET);
    expect(usage.llmCalls).toBe(1);
    expect(usage.totalTokens).toBe(0);
    expect(usage.costUsd).toBe(0);
  });

  it("makes the run's cost null once a call has tokens without a rate, and keeps it null", () => {
    const usage = createRunUsage();
    accumulateUsage(usage, { inputTokens: 10, outputTokens: 0 }, SONNET);
    accumulateUsage(usage, { inputTokens: 0, outputTokens: 10 }, { input: 1 });
    expect(usage.costUsd).toBeNull();
    accumulateUsage(usage, { inputTokens: 10, outputTokens: 10 }, SONNET);
    expect(usage.costUsd).toBeNull();
    expect(usage.totalTokens).toBe(40);
  });

  it("keeps the cost known for zero tokens of a class without a rate", () => {
    const usage = createRunUsage();
    accumulateUsage(usage, { inputTokens: 1_000_000, outputTokens: 0 }, { input: 2 });
    expect(usage.costUsd).toBe(2);
  });
});
