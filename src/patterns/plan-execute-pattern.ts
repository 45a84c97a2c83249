import { BasePattern } from "./base-pattern.js";
import type { StepAction } from "./pattern.js";

const PLAN_INSTRUCTION =
  "First make a plan. Reply with the plan only: a numbered list of short steps, one per line, at most {max} steps.";

/**
 * Plan, then execute: one model call writes a numbered plan (`pattern.plan_created`), then each plan step runs
 * as a ReAct loop of its own (`pattern.phase`, `pattern.step_started`); the last step's answer is the output.
 */
export class PlanExecutePattern extends BasePattern {
  constructor(private readonly options: { maxPlanSteps?: number } = {}) {
    super();
  }

  override async execute(): Promise<unknown> {
    this.injectValidationCorrection();
    const resolution = await this.resolveFollowup({ context: this.context });
    if (resolution?.status === "resolved") return resolution.output;
    const driver = this.driver;
    const maxPlanSteps = this.options.maxPlanSteps ?? 8;
    this.emit("pattern.phase", { phase: "plan" });
    const planAction = await driver.runStep(async () => {
      const response = await this.callLlm({
        tools: [],
        system: [driver.systemPrompt(), PLAN_INSTRUCTION.replace("{max}", String(maxPlanSteps))]
          .filter(Boolean)
          .join("\n\n"),
      });
      this.recordResponse(response);
      return { type: "final", output: response.text };
    });
    const plan = parsePlan(String((planAction as { output: unknown }).output)).slice(0, maxPlanSteps);
    this.emit("pattern.plan_created", { plan });
    this.emit("pattern.phase", { phase: "execute" });
    let output: unknown = "";
    for (let index = 0; index < plan.length; index++) {
      const planStep = plan[index]!;
      this.emit("pattern.step_started", { step: index + 1, planStep });
      driver.appendMessage({
        role: "user",
        content: `Carry out step ${index + 1} of ${plan.length} of the plan: ${planStep}`,
      });
      for (;;) {
        const action = await driver.runStep(() => this.react());
        if (action.type === "final") {
          output = action.output;
          break;
        }
      }
      this.emit("pattern.step_finished", { step: index + 1, action: "final" });
    }
    return output;
  }

  async react(): Promise<StepAction> {
    const response = await this.callLlm();
    this.recordResponse(response);
    if (response.toolCalls.length === 0) return this.finalAnswer(response);
    await this.callTools(response.toolCalls);
    return { type: "continue" };
  }
}

/** Plan steps from a numbered or bulleted list (or, failing that, non-empty lines). */
export function parsePlan(text: string): string[] {
  const lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const listed = lines
    .map((line) => /^(?:\d+[.)]|[-*•])\s+(.*)$/.exec(line)?.[1]?.trim())
    .filter((step): step is string => Boolean(step));
  if (listed.length > 0) return listed;
  return lines.length > 0 ? lines : [text.trim() || "Answer the request"];
}
