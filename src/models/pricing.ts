import type { CostBreakdown } from "../runtime/run-types.js";
import type { ModelUsage } from "./language-model.js";

/** USD per one million tokens. A missing rate means "unknown", not free. */
export interface ModelPricing {
  input?: number;
  output?: number;
  cached_read?: number;
  cached_write?: number;
}

/** Prices built in (RT-10); `llm.pricing` overrides them field by field. */
export const PRICE_TABLE: Readonly<Record<string, Readonly<ModelPricing>>> = {
  "claude-opus-4-6": { input: 15, output: 75, cached_read: 1.5, cached_write: 18.75 },
  "claude-sonnet-4-6": { input: 3, output: 15, cached_read: 0.3, cached_write: 3.75 },
  "claude-haiku-4-5": { input: 0.8, output: 4, cached_read: 0.08, cached_write: 1 },
  "gpt-4o": { input: 2.5, output: 10, cached_read: 1.25 },
  "gpt-4o-mini": { input: 0.15, output: 0.6, cached_read: 0.075 },
  o1: { input: 15, output: 60, cached_read: 7.5 },
};

/** The mock models cost nothing, unless a test gives them a price. */
const FREE: Readonly<ModelPricing> = { input: 0, output: 0, cached_read: 0, cached_write: 0 };

/** The rates for a model: the table's entry for its exact id, overridden field by field. */
export function resolvePricing(modelId: string, override?: ModelPricing, provider?: string): ModelPricing {
  const base = provider === "mock" && !override ? FREE : (PRICE_TABLE[modelId] ?? {});
  return override ? { ...base, ...override } : base;
}

export interface CallCost {
  /** Null when some tokens have no known rate. */
  costUsd: number | null;
  breakdown: CostBreakdown;
}

/** The cost of one call. Non-cached input = input − cache read − cache creation. */
export function computeCost(usage: ModelUsage, pricing: ModelPricing): CallCost {
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheCreationTokens ?? 0;
  const plainInput = Math.max(0, usage.inputTokens - cacheRead - cacheWrite);
  const breakdown: CostBreakdown = { input: 0, output: 0, cached_read: 0, cached_write: 0 };
  let known = true;
  const price = (tokens: number, rate: number | undefined): number => {
    if (tokens <= 0) return 0;
    if (rate === undefined) {
      known = false;
      return 0;
    }
    return (tokens / 1_000_000) * rate;
  };
  breakdown.input = price(plainInput, pricing.input);
  breakdown.output = price(usage.outputTokens, pricing.output);
  breakdown.cached_read = price(cacheRead, pricing.cached_read);
  breakdown.cached_write = price(cacheWrite, pricing.cached_write);
  return {
    costUsd: known
      ? breakdown.input + breakdown.output + breakdown.cached_read + breakdown.cached_write
      : null,
    breakdown,
  };
}
