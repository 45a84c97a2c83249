import type { ModelResponse } from "../contracts/hook.js";
import { BasePattern } from "./base-pattern.js";
import type { StepAction } from "./pattern.js";

/**
 * ReAct with native tool calls: each step asks the model, runs the tools it called, and feeds their results
 * back; a turn without tool calls is the final answer.
 */
export class ReactPattern extends BasePattern {
  react(): Promise<StepAction> {
    // A reaction, not an async frame: a step pays for no frame and no await, and a run waiting on its model
    // or its tools holds nothing of this call (S3).
    return this.callLlm().then(this.answered);
  }

  /** What the step does with the model's answer; made once per pattern, not per step. */
  private readonly answered = (response: ModelResponse): Promise<StepAction> => {
    this.recordResponse(response);
    if (response.toolCalls.length === 0) return this.finalAnswer(response);
    return this.callTools(response.toolCalls).then(toContinue);
  };
}

const CONTINUE: StepAction = Object.freeze({ type: "continue" }) as StepAction;

function toContinue(): StepAction {
  return CONTINUE;
}
