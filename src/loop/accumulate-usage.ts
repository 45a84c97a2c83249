import type { ModelUsage } from "../contracts/language-model.js";
import type { RunUsage } from "../contracts/run-types.js";
import type { ModelPricing } from "../models/pricing.js";

/**
 * Add one model call to the run's usage and cost, in place (no per-call objects on the hot path). Once a
 * call has tokens without a known rate, the run's cost is null and stays null. Non-cached input is
 * input − cache read − cache creation.
 */
export function accumulateUsage(usage: RunUsage, call: ModelUsage | undefined, pricing: ModelPricing): void {
  usage.llmCalls++;
  if (!call) return;
  const cacheRead = call.cacheReadTokens ?? 0;
  const cacheWrite = call.cacheCreationTokens ?? 0;
  usage.inputTokens += call.inputTokens;
  usage.outputTokens += call.outputTokens;
  usage.totalTokens += call.totalTokens ?? call.inputTokens + call.outputTokens;
  usage.inputTokensCached += cacheRead;
  usage.inputTokensCacheCreation += cacheWrite;
  usage.reasoningTokens += call.reasoningTokens ?? 0;
  const breakdown = usage.costBreakdown;
  let known = true;
  const plainInput = Math.max(0, call.inputTokens - cacheRead - cacheWrite);
  if (plainInput > 0) {
    if (pricing.input === undefined) known = false;
    else breakdown.input += (plainInput / 1_000_000) * pricing.input;
  }
  if (call.outputTokens > 0) {
    if (pricing.output === undefined) known = false;
    else breakdown.output += (call.outputTokens / 1_000_000) * pricing.output;
  }
  if (cacheRead > 0) {
    if (pricing.cached_read === undefined) known = false;
    else breakdown.cachedRead += (cacheRead / 1_000_000) * pricing.cached_read;
  }
  if (cacheWrite > 0) {
    if (pricing.cached_write === undefined) known = false;
    else breakdown.cachedWrite += (cacheWrite / 1_000_000) * pricing.cached_write;
  }
  usage.costUsd =
    usage.costUsd === null || !known
      ? null
      : breakdown.input + breakdown.output + breakdown.cachedRead + breakdown.cachedWrite;
}
