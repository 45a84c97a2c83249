import { BasePattern } from "./base-pattern.js";
import type { StepAction } from "./pattern.js";

/**
 * ReAct with native tool calls: each step asks the model, runs the tools it called, and feeds their results
 * back; a turn without tool calls is the final answer.
 */
export class ReactPattern extends BasePattern {
  async react(): Promise<StepAction> {
    const response = await this.callLlm();
    this.recordResponse(response);
    if (response.toolCalls.length === 0) return this.finalAnswer(response);
    await this.callTools(response.toolCalls);
    return CONTINUE;
  }
}

const CONTINUE: StepAction = Object.freeze({ type: "continue" }) as StepAction;
