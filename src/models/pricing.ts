import type { ModelUsage } from "../contracts/language-model.js";
import type { CostBreakdown } from "../contracts/run-types.js";

/** USD per one million tokens, keyed as `llm.pricing` is in agent.json. A missing rate means "unknown", not free. */
export interface ModelPricing {
  input?: number;
  output?: number;
  cached_read?: number;
  cached_write?: number;
}

/** Prices built in; `llm.pricing` overrides them field by field. */
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

/**
 * The rates for a model: the table's entry for its family (see {@link findTablePrice}), overridden field by
 * field.
 */
export function resolvePricing(modelId: string, override?: ModelPricing, provider?: string): ModelPricing {
  const base = provider === "mock" && !override ? FREE : (findTablePrice(modelId) ?? {});
  return override ? { ...base, ...override } : base;
}

/** What may follow a known id in a snapshot of the same model: a date, `latest`, or a version. */
const SNAPSHOT_SUFFIX = /^(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest|v\d+(?:\.\d+)*)$/;
// Longest first, so a family is matched before any shorter id it begins with.
const KNOWN_IDS = Object.keys(PRICE_TABLE).sort((a, b) => b.length - a.length);

/**
 * The built-in price of a model id: the table's id itself, or one of its dated or versioned snapshots
 * (`gpt-4o-2024-08-06`, `claude-sonnet-4-6-20260101`, `…-latest`), also behind a provider prefix
 * (`openai/gpt-4o`). A suffix must be a date or version: `gpt-4o-mini` is not priced as `gpt-4o`, nor `o1-pro`
 * as `o1`. Undefined when the table has no such family.
 */
export function findTablePrice(modelId: string): Readonly<ModelPricing> | undefined {
  const id = modelId.trim().toLowerCase();
  const bare = id.slice(id.lastIndexOf("/") + 1);
  // Own keys only: "constructor" is not a model.
  if (Object.hasOwn(PRICE_TABLE, bare)) return PRICE_TABLE[bare];
  for (const known of KNOWN_IDS) {
    if (bare.startsWith(`${known}-`) && SNAPSHOT_SUFFIX.test(bare.slice(known.length + 1))) {
      return PRICE_TABLE[known];
    }
  }
  return undefined;
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
  const breakdown: CostBreakdown = { input: 0, output: 0, cachedRead: 0, cachedWrite: 0 };
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
  breakdown.cachedRead = price(cacheRead, pricing.cached_read);
  breakdown.cachedWrite = price(cacheWrite, pricing.cached_write);
  return {
    costUsd: known ? breakdown.input + breakdown.output + breakdown.cachedRead + breakdown.cachedWrite : null,
    breakdown,
  };
}
