import { describe, expect, it } from "vitest";
import { computeCost, findTablePrice, PRICE_TABLE, resolvePricing } from "./pricing.js";

describe("PRICE_TABLE", () => {
  it("holds exactly the spec's prices per 1M tokens", () => {
    expect(PRICE_TABLE).toEqual({
      "claude-opus-4-6": { input: 15, output: 75, cached_read: 1.5, cached_write: 18.75 },
      "claude-sonnet-4-6": { input: 3, output: 15, cached_read: 0.3, cached_write: 3.75 },
      "claude-haiku-4-5": { input: 0.8, output: 4, cached_read: 0.08, cached_write: 1 },
      "gpt-4o": { input: 2.5, output: 10, cached_read: 1.25 },
      "gpt-4o-mini": { input: 0.15, output: 0.6, cached_read: 0.075 },
      o1: { input: 15, output: 60, cached_read: 7.5 },
    });
  });

  it("has no cached_write rate for the OpenAI models", () => {
    for (const model of ["gpt-4o", "gpt-4o-mini", "o1"])
      expect(PRICE_TABLE[model]!.cached_write).toBeUndefined();
  });
});

describe("resolvePricing", () => {
  it("finds a model by its exact id", () => {
    expect(resolvePricing("gpt-4o")).toEqual({ input: 2.5, output: 10, cached_read: 1.25 });
    expect(resolvePricing("unknown-model")).toEqual({});
  });

  it("prices dated and versioned snapshots, and provider-prefixed ids, as their family", () => {
    expect(resolvePricing("gpt-4o-2024-08-06")).toEqual(PRICE_TABLE["gpt-4o"]);
    expect(resolvePricing("o1-2024-12-17")).toEqual(PRICE_TABLE.o1);
    expect(resolvePricing("gpt-4o-mini-2024-07-18")).toEqual(PRICE_TABLE["gpt-4o-mini"]);
    expect(resolvePricing("claude-sonnet-4-6-20260115")).toEqual(PRICE_TABLE["claude-sonnet-4-6"]);
    expect(resolvePricing("claude-haiku-4-5-latest")).toEqual(PRICE_TABLE["claude-haiku-4-5"]);
    expect(resolvePricing("gpt-4o-0806")).toEqual(PRICE_TABLE["gpt-4o"]);
    expect(resolvePricing("claude-opus-4-6-v2")).toEqual(PRICE_TABLE["claude-opus-4-6"]);
    expect(resolvePricing("anthropic/claude-sonnet-4-6")).toEqual(PRICE_TABLE["claude-sonnet-4-6"]);
    expect(resolvePricing("openai/gpt-4o-2024-08-06")).toEqual(PRICE_TABLE["gpt-4o"]);
    expect(resolvePricing("GPT-4o")).toEqual(PRICE_TABLE["gpt-4o"]);
    expect(resolvePricing("gpt-4o-2024-08-06", { output: 20 })).toEqual({
      input: 2.5,
      output: 20,
      cached_read: 1.25,
    });
  });

  it("does not price another model that only starts like a known one", () => {
    for (const id of [
      "gpt-4o-mini-tts",
      "gpt-4o-audio-preview",
      "gpt-4o-realtime-preview-2024-12-17",
      "o1-mini",
      "o1-pro",
      "o1-preview-2024-09-12",
      "o10",
      "gpt-4o2",
      "claude-sonnet-4-60",
      "claude-sonnet-4",
      "constructor",
      "__proto__",
    ]) {
      expect(findTablePrice(id), id).toBeUndefined();
      expect(resolvePricing(id), id).toEqual({});
    }
  });

  it("overrides field by field", () => {
    expect(resolvePricing("claude-sonnet-4-6", { output: 20 })).toEqual({
      input: 3,
      output: 20,
      cached_read: 0.3,
      cached_write: 3.75,
    });
    expect(resolvePricing("gpt-4o", { cached_write: 3 })).toEqual({
      input: 2.5,
      output: 10,
      cached_read: 1.25,
      cached_write: 3,
    });
    expect(resolvePricing("my-model", { input: 1, output: 2 })).toEqual({ input: 1, output: 2 });
  });

  it("does not change the table when overriding", () => {
    resolvePricing("gpt-4o", { input: 99 });
    expect(PRICE_TABLE["gpt-4o"]!.input).toBe(2.5);
  });

  it("makes the mock provider free, whatever the model id, unless a price is given", () => {
    expect(resolvePricing("mock-scripted", undefined, "mock")).toEqual({
      input: 0,
      output: 0,
      cached_read: 0,
      cached_write: 0,
    });
    expect(resolvePricing("gpt-4o", undefined, "mock")).toEqual({
      input: 0,
      output: 0,
      cached_read: 0,
      cached_write: 0,
    });
    // A priced mock gets exactly the given rates: the others are unknown, not free.
    expect(resolvePricing("mock-echo", { output: 1 }, "mock")).toEqual({ output: 1 });
    expect(resolvePricing("gpt-4o", { output: 1 }, "mock")).toEqual({
      input: 2.5,
      output: 1,
      cached_read: 1.25,
    });
    expect(resolvePricing("gpt-4o", undefined, "openai_compatible")).toEqual({
      input: 2.5,
      output: 10,
      cached_read: 1.25,
    });
  });
});

describe("computeCost", () => {
  it("prices input and output tokens", () => {
    const cost = computeCost(
      { inputTokens: 2_000_000, outputTokens: 1_000_000 },
      resolvePricing("claude-sonnet-4-6"),
    );
    expect(cost).toEqual({
      costUsd: 21,
      breakdown: { input: 6, output: 15, cachedRead: 0, cachedWrite: 0 },
    });
  });

  it("prices cache reads and creation separately from the non-cached input", () => {
    const cost = computeCost(
      {
        inputTokens: 3_000_000,
        outputTokens: 2_000_000,
        cacheReadTokens: 1_000_000,
        cacheCreationTokens: 1_000_000,
      },
      resolvePricing("claude-sonnet-4-6"),
    );
    expect(cost.breakdown).toEqual({ input: 3, output: 30, cachedRead: 0.3, cachedWrite: 3.75 });
    expect(cost.costUsd).toBeCloseTo(37.05, 10);
  });

  it("computes small calls per token", () => {
    const cost = computeCost(
      { inputTokens: 1200, outputTokens: 300, cacheReadTokens: 200 },
      resolvePricing("claude-opus-4-6"),
    );
    // 1000 plain input × 15, 300 output × 75, 200 cached read × 1.5 (per 1M).
    expect(cost.breakdown.input).toBeCloseTo(0.015, 12);
    expect(cost.breakdown.output).toBeCloseTo(0.0225, 12);
    expect(cost.breakdown.cachedRead).toBeCloseTo(0.0003, 12);
    expect(cost.breakdown.cachedWrite).toBe(0);
    expect(cost.costUsd).toBeCloseTo(0.0378, 12);
  });

  it("never charges negative non-cached input", () => {
    const cost = computeCost(
      { inputTokens: 100, outputTokens: 0, cacheReadTokens: 1_000_000 },
      resolvePricing("gpt-4o"),
    );
    expect(cost).toEqual({
      costUsd: 1.25,
      breakdown: { input: 0, output: 0, cachedRead: 1.25, cachedWrite: 0 },
    });
  });

  it("is null when tokens have no known rate", () => {
    expect(
      computeCost({ inputTokens: 10, outputTokens: 0 }, resolvePricing("unknown-model")).costUsd,
    ).toBeNull();
    expect(computeCost({ inputTokens: 0, outputTokens: 10 }, { input: 1 }).costUsd).toBeNull();
    // gpt-4o has no cached_write rate: cache creation tokens make the cost unknown.
    const cost = computeCost(
      { inputTokens: 2_000_000, outputTokens: 0, cacheCreationTokens: 1_000_000 },
      resolvePricing("gpt-4o"),
    );
    expect(cost.costUsd).toBeNull();
    expect(cost.breakdown).toEqual({ input: 2.5, output: 0, cachedRead: 0, cachedWrite: 0 });
  });

  it("stays known when the tokens without a rate are zero", () => {
    expect(computeCost({ inputTokens: 0, outputTokens: 0 }, {})).toEqual({
      costUsd: 0,
      breakdown: { input: 0, output: 0, cachedRead: 0, cachedWrite: 0 },
    });
    const cost = computeCost(
      { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheCreationTokens: 0 },
      resolvePricing("gpt-4o"),
    );
    expect(cost.costUsd).toBe(12.5);
  });

  it("is zero for the mock provider", () => {
    expect(
      computeCost(
        { inputTokens: 500, outputTokens: 500, cacheReadTokens: 100, cacheCreationTokens: 100 },
        resolvePricing("mock-echo", undefined, "mock"),
      ).costUsd,
    ).toBe(0);
  });
});
