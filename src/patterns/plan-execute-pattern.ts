import { BasePattern } from "./base-pattern.js";
import type { StepAction } from "./pattern.js";

const PLAN_INSTRUCTION =
  "First make a plan. Reply with the plan only: a numbered list of short steps, one per line, at most {max} steps.";

/**
 * Plan, then execute: one model call writes a numbered plan (`pattern.plan_created`), then each plan step runs
 * as a ReAct loop of its own (`pattern.phase`, `pattern.step_started`); the last step's answer is the output.
 */
export class PlanExecutePattern extends BasePattern {
  /**
   * The plan, the plan step in progress, and the last step's answer: what a resumed run continues from. It is
   * advanced inside the step that finishes a plan step, so that step's checkpoint already holds the new value.
   */
  private progress: PlanProgress | null = null;

  constructor(private readonly options: { maxPlanSteps?: number } = {}) {
    super();
  }

  saveProgress(): unknown {
    return this.progress ?? undefined;
  }

  restoreProgress(progress: unknown): void {
    const saved = progress as Partial<PlanProgress> | undefined;
    if (saved && Array.isArray(saved.plan) && typeof saved.index === "number") {
      this.progress = {
        plan: saved.plan.map(String),
        index: saved.index,
        started: saved.started === true,
        output: saved.output ?? "",
      };
    }
  }

  override async execute(): Promise<unknown> {
    const driver = this.driver;
    if (!driver.takeResumed() || this.progress === null) {
      this.progress = null;
      this.injectValidationCorrection();
      const resolution = await this.resolveFollowup({ context: this.context });
      if (resolution?.status === "resolved") return resolution.output;
      await this.makePlan();
      this.emit("pattern.plan_created", { plan: this.progress!.plan });
      this.emit("pattern.phase", { phase: "execute" });
    }
    const progress = this.progress!;
    while (progress.index < progress.plan.length) {
      if (!progress.started) {
        const planStep = progress.plan[progress.index]!;
        this.emit("pattern.step_started", { step: progress.index + 1, planStep });
        driver.appendMessage({
          role: "user",
          content: `Carry out step ${progress.index + 1} of ${progress.plan.length} of the plan: ${planStep}`,
        });
        progress.started = true;
      }
      await driver.runStep(() => this.react());
    }
    return progress.output;
  }

  /** One model call writes the plan (`pattern.phase` "plan"); the step ends with the plan in `progress`. */
  private async makePlan(): Promise<void> {
    const driver = this.driver;
    const maxPlanSteps = this.options.maxPlanSteps ?? 8;
    this.emit("pattern.phase", { phase: "plan" });
    await driver.runStep(async () => {
      const response = await this.callLlm({
        tools: [],
        outputSchema: undefined,
        system: [driver.systemPrompt(), PLAN_INSTRUCTION.replace("{max}", String(maxPlanSteps))]
          .filter(Boolean)
          .join("\n\n"),
      });
      this.recordResponse(response);
      const plan = parsePlan(response.text).slice(0, maxPlanSteps);
      this.progress = { plan, index: 0, started: false, output: "" };
      return { type: "final", output: response.text };
    });
  }

  async react(): Promise<StepAction> {
    const response = await this.callLlm();
    this.recordResponse(response);
    if (response.toolCalls.length > 0) {
      await this.callTools(response.toolCalls);
      return { type: "continue" };
    }
    const action = await this.finalAnswer(response);
    const progress = this.progress;
    if (progress !== null && action.type === "final") {
      progress.output = action.output;
      this.emit("pattern.step_finished", { step: progress.index + 1, action: "final" });
      progress.index++;
      progress.started = false;
    }
    return action;
  }
}

interface PlanProgress {
  plan: string[];
  index: number;
  started: boolean;
  output: unknown;
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
