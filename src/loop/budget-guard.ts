import type { LanguageModel, ModelRequest } from "../contracts/language-model.js";
import type { RunContext } from "../contracts/tool.js";
import { BudgetExhaustedError } from "../errors/error-classes.js";
import type { RunEventLog } from "../events/run-event-log.js";
import { getLogger } from "../logging/logger.js";
import type { ModelPricing } from "../models/pricing.js";
import { TerminateRun } from "./run-signals.js";

export interface TokenAndCostLimits {
  maxTotalTokens: number | undefined;
  maxCostUsd: number | undefined;
}

/** The run a budget watches: its context, its log and its agent's model with that model's prices. */
export interface BudgetedRun {
  readonly ctx: RunContext;
  readonly log: RunEventLog;
  readonly agent: { readonly model: LanguageModel; readonly pricing: ModelPricing };
}

/**
 * The run's token and cost budgets, checked before each model call (with the request's input
 * projected) and after it. Crossing one ends the run `budget_exhausted`; with the cost unknown — the model has
 * no input or output rate, or a call's tokens had none — the cost limit is announced as skipped once
 * (`budget.cost_skipped` and a warning naming the model) and not enforced.
 */
export class BudgetGuard {
  private costSkipped = false;

  private readonly ctx: RunContext;
  private readonly log: RunEventLog;
  private readonly model: LanguageModel;
  private readonly pricing: ModelPricing;

  constructor(
    private readonly limits: TokenAndCostLimits,
    run: BudgetedRun,
  ) {
    this.ctx = run.ctx;
    this.log = run.log;
    this.model = run.agent.model;
    this.pricing = run.agent.pricing;
  }

  /** Whether any budget is set; without one the loop skips every check. */
  get active(): boolean {
    return this.limits.maxTotalTokens !== undefined || this.limits.maxCostUsd !== undefined;
  }

  /** Throw `TerminateRun` when usage, plus the projected input of a call about to start, crosses a budget. */
  check(step: number, projectedInputTokens = 0): void {
    const usage = this.ctx.usage;
    const { maxTotalTokens, maxCostUsd } = this.limits;
    if (maxTotalTokens !== undefined && usage.totalTokens + projectedInputTokens > maxTotalTokens) {
      throw this.exhausted(
        "token_budget",
        { current: usage.totalTokens, limit: maxTotalTokens, unit: "tokens" },
        step,
      );
    }
    if (maxCostUsd === undefined) return;
    // Known before the first call when the model has no rate, so the run is told before it spends anything.
    if (usage.costUsd === null || this.pricing.input === undefined || this.pricing.output === undefined) {
      if (!this.costSkipped) {
        this.costSkipped = true;
        this.skipCost(maxCostUsd);
      }
      return;
    }
    const projected = usage.costUsd + (projectedInputTokens / 1_000_000) * (this.pricing.input ?? 0);
    if (projected > maxCostUsd)
      throw this.exhausted("cost_budget", { current: usage.costUsd, limit: maxCostUsd, unit: "USD" }, step);
  }

  private skipCost(limit: number): void {
    const { modelId, provider } = this.model;
    this.log.emit("budget.cost_skipped", { limit, reason: "cost_unavailable", model: modelId });
    getLogger().warn(
      `budget.maxCostUsd (${limit} USD) is not enforced: Keel knows no price for model "${modelId}" ` +
        `(provider ${provider}), so the run's cost is unknown. Set llm.pricing to its rates in USD per ` +
        '1M tokens, e.g. {"input": 3, "output": 15}',
      { runId: this.ctx.runId, agentId: this.ctx.agentId, model: modelId, provider, limit },
    );
  }

  /** Approximate input tokens of a request, counted only when a cost budget needs the projection. */
  projectInputTokens(request: ModelRequest): number {
    const count = this.model.countTokens;
    if (this.limits.maxCostUsd === undefined || !count) return 0;
    let total = 0;
    for (const message of request.messages) {
      const text = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
      total += count.call(this.model, text);
    }
    return total;
  }

  private exhausted(
    kind: string,
    amount: { current: number; limit: number; unit: string },
    step: number,
  ): TerminateRun {
    const { current, limit, unit } = amount;
    const error = new BudgetExhaustedError(
      `The run's ${kind.replace("_", " ")} is exhausted: ${Math.round(current * 1e6) / 1e6} of ${limit} ${unit}`,
      {
        kind,
        current,
        limit,
        hint: "Raise the limit in the run's budget, or give the agent a smaller task",
        context: { agentId: this.ctx.agentId, sessionId: this.ctx.sessionId, runId: this.ctx.runId, step },
      },
    );
    return new TerminateRun({ type: "stopped", value: kind }, error);
  }
}
