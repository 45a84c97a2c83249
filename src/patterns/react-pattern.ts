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
    // Returned, not awaited: this frame ends here, so a run waiting on its tools does not keep it (S3).
    return this.callTools(response.toolCalls).then(toContinue);
  }
}

const CONTINUE: StepAction = Object.freeze({ type: "continue" }) as StepAction;

function toContinue(): StepAction {
  return CONTINUE;
}
