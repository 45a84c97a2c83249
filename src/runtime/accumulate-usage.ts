import type { ModelUsage } from "../models/language-model.js";
import type { CallCost } from "../models/pricing.js";
import type { RunUsage } from "./run-types.js";

/** Add one model call to the run's usage. Once a call's cost is unknown, the run's stays null (RT-10). */
export function accumulateUsage(
  usage: RunUsage,
  call: ModelUsage | undefined,
  cost: CallCost | undefined,
): void {
  usage.llmCalls++;
  if (!call) return;
  usage.inputTokens += call.inputTokens;
  usage.outputTokens += call.outputTokens;
  usage.totalTokens += call.totalTokens ?? call.inputTokens + call.outputTokens;
  usage.inputTokensCached += call.cacheReadTokens ?? 0;
  usage.inputTokensCacheCreation += call.cacheCreationTokens ?? 0;
  usage.reasoningTokens += call.reasoningTokens ?? 0;
  if (!cost) return;
  const breakdown = usage.costBreakdown;
  breakdown.input += cost.breakdown.input;
  breakdown.output += cost.breakdown.output;
  breakdown.cached_read += cost.breakdown.cached_read;
  breakdown.cached_write += cost.breakdown.cached_write;
  usage.costUsd = usage.costUsd === null || cost.costUsd === null ? null : usage.costUsd + cost.costUsd;
}
