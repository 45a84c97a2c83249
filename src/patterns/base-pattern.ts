import type { ModelResponse } from "../contracts/hook.js";
import type { ModelRequest } from "../contracts/language-model.js";
import type { Message, ToolCall } from "../contracts/message.js";
import type { RunArtifact } from "../contracts/run-types.js";
import type { RunContext } from "../contracts/tool.js";
import type {
  FollowupResolution,
  Pattern,
  PatternDriver,
  ResponseRepairDecision,
  StepAction,
  ToolCallOutcome,
} from "./pattern.js";

/**
 * The base of Keel's patterns and yours: `execute()` runs `react()` once per step until it returns a final
 * action, and the helpers route every model and tool call through the run loop's phases.
 */
export abstract class BasePattern implements Pattern {
  private boundContext: RunContext | undefined;
  private boundDriver: PatternDriver | undefined;

  get context(): RunContext {
    if (!this.boundContext) throw new Error("The pattern is used before setup()");
    return this.boundContext;
  }

  protected get driver(): PatternDriver {
    if (!this.boundDriver) throw new Error("The pattern is used before setup()");
    return this.boundDriver;
  }

  setup(ctx: RunContext, driver: PatternDriver): void {
    this.boundContext = ctx;
    this.boundDriver = driver;
  }

  /** One step's work: call the model, run tools, decide whether the run is done. */
  abstract react(): Promise<StepAction>;

  async execute(): Promise<unknown> {
    if (!this.driver.takeResumed()) {
      this.injectValidationCorrection();
      const resolution = await this.resolveFollowup({ context: this.context });
      if (resolution?.status === "resolved") {
        this.context.state.resolvedBy = "resolveFollowup";
        return resolution.output;
      }
    }
    // The step bracket is inlined rather than `driver.runStep(() => this.react())`: a run parked on a tool
    // then holds one suspended frame less (S3), and a step allocates no closure.
    const driver = this.driver;
    for (;;) {
      const begun = driver.beginStep();
      if (begun !== undefined) await begun;
      let action: StepAction;
      try {
        action = await this.react();
      } catch (error) {
        await driver.abortStep(error);
        throw error;
      }
      const completed = driver.completeStep(action);
      if (completed !== undefined) await completed;
      if (action.type === "final") return action.output;
    }
  }

  emit(name: string, payload: Record<string, unknown>): void {
    this.driver.emit(name, payload);
  }

  callLlm(request?: Partial<ModelRequest>): Promise<ModelResponse> {
    return this.driver.callLlm(request);
  }

  callTools(calls: ToolCall[]): Promise<ToolCallOutcome[]> {
    return this.driver.callTools(calls);
  }

  callTool(toolId: string, params: Record<string, unknown> = {}): Promise<unknown> {
    return this.driver.callTool(toolId, params);
  }

  callToolBatch(calls: readonly (readonly [string, Record<string, unknown>])[]): Promise<unknown[]> {
    return this.driver.callToolBatch(calls);
  }

  /** A no-op by default; override to summarise or drop old messages. */
  async compressContext(): Promise<void> {}

  addArtifact(artifact: Partial<RunArtifact> & { name: string }): void {
    this.driver.addArtifact(artifact);
  }

  /** Answer a follow-up without the model; abstains by default. */
  resolveFollowup(_input: {
    context: RunContext;
  }): Promise<FollowupResolution | null> | FollowupResolution | null {
    return null;
  }

  /** Recover from an empty model answer; abstains by default. */
  repairEmptyResponse(_input: {
    context: RunContext;
    messages: readonly Message[];
    assistantContent: string;
    stopReason: string;
    retries: number;
  }): Promise<ResponseRepairDecision | null> | ResponseRepairDecision | null {
    return null;
  }

  /** Append the model's answer to the transcript, with its tool calls and reasoning. */
  protected recordResponse(response: ModelResponse): void {
    const message: Message =
      response.toolCalls.length > 0
        ? { role: "assistant", content: response.text, toolCalls: response.toolCalls }
        : { role: "assistant", content: response.text };
    if (response.reasoning.length > 0) message.reasoning = response.reasoning;
    this.driver.appendMessage(message);
  }

  /** After a failed structured output, tell the model what was wrong before it tries again. */
  protected injectValidationCorrection(): void {
    const last = this.driver.takeValidationError();
    if (!last) return;
    this.driver.appendMessage({
      role: "user",
      content:
        `Your previous final output failed validation (attempt ${last.attempt}): ${last.message}\n` +
        `Expected schema: ${JSON.stringify(last.expectedSchema)}\nPlease produce a corrected final output.`,
    });
  }

  /** The final answer of a model turn without tool calls, repaired when it is empty and a repair is offered. */
  protected async finalAnswer(response: ModelResponse): Promise<StepAction> {
    if (response.text.trim() !== "") return { type: "final", output: response.text };
    const decision = await this.repairEmptyResponse({
      context: this.context,
      messages: this.context.transcript,
      assistantContent: response.text,
      stopReason: response.stopReason,
      retries: 0,
    });
    if (decision?.status === "repaired") return { type: "final", output: decision.output };
    return { type: "final", output: response.text };
  }
}
