import type { ModelResponse } from "../contracts/hook.js";
import type { ModelRequest } from "../contracts/language-model.js";
import type { Message, ToolCall } from "../contracts/message.js";
import type { RunArtifact } from "../contracts/run-types.js";
import type { RunContext } from "../contracts/tool.js";

export type StepAction = { type: "final"; output: unknown } | { type: "continue" };

export interface ToolCallOutcome {
  toolCallId: string;
  toolId: string;
  status: "succeeded" | "failed" | "cancelled" | "suspended";
  result?: unknown;
  error?: { code: string; message: string };
}

export interface FollowupResolution {
  status: "resolved" | "abstain" | "error";
  output?: unknown;
  reason?: string;
  metadata?: Record<string, unknown>;
}

export interface ResponseRepairDecision {
  status: "repaired" | "abstain" | "error";
  output?: unknown;
  reason?: string;
  metadata?: Record<string, unknown>;
}

/**
 * What the run loop lends a pattern. Every model call and tool call a pattern makes goes through it, so the
 * phases, budgets, events and checkpoints apply whichever pattern drives the run.
 */
export interface PatternDriver {
  /** Run one step: StepStart hooks, `body`, StepEnd hooks, stop conditions and the step's checkpoint. */
  runStep(body: () => Promise<StepAction>): Promise<StepAction>;
  /** `runStep` in three parts, for a pattern's own loop: begin (a promise only when hooks need one)… */
  beginStep(): Promise<void> | undefined;
  /** …complete with the step's action (throws `TerminateRun` when a stop condition or budget fires)… */
  completeStep(action: StepAction): Promise<void> | undefined;
  /** …or abort with the error the step's body threw (then rethrow it). */
  abortStep(error: unknown): Promise<void>;
  /** BeforeInference → model → AfterInference. */
  callLlm(request?: Partial<ModelRequest>): Promise<ModelResponse>;
  /** ToolGate → BeforeToolExecute → execute → AfterToolExecute for a model's calls; appends their results. */
  callTools(calls: ToolCall[]): Promise<ToolCallOutcome[]>;
  /** Call one tool outside a model turn (still through every phase); resolves with its data or throws. */
  callTool(toolId: string, params: Record<string, unknown>): Promise<unknown>;
  /** Call several tools as one step, grouped by tool, results in input order (failures as errors in place). */
  callToolBatch(calls: readonly (readonly [string, Record<string, unknown>])[]): Promise<unknown[]>;
  emit(name: string, payload: Record<string, unknown>): void;
  addArtifact(artifact: Partial<RunArtifact> & { name: string }): void;
  /** The system prompt with the run's `systemPromptFragments`. */
  systemPrompt(): string | undefined;
  appendMessage(message: Message): void;
  /**
   * True once when the run was rebuilt from a checkpoint: the pattern continues after the restored steps and
   * must not start the run over (no follow-up resolution, no first-turn set-up).
   */
  takeResumed(): boolean;
  /** The last structured-output failure, once (it is also in `ctx.scratch.lastValidationError`). */
  takeValidationError(): { attempt: number; message: string; expectedSchema: unknown } | undefined;
}

/** The pattern seam: what one run does, step by step. */
export interface Pattern {
  setup(ctx: RunContext, driver: PatternDriver): void | Promise<void>;
  /** Drive the run to its final output. */
  execute(): Promise<unknown>;
  resolveFollowup?(input: {
    context: RunContext;
  }): Promise<FollowupResolution | null> | FollowupResolution | null;
  repairEmptyResponse?(input: {
    context: RunContext;
    messages: readonly Message[];
    assistantContent: string;
    stopReason: string;
    retries: number;
  }): Promise<ResponseRepairDecision | null> | ResponseRepairDecision | null;
  /** What the pattern must remember across a resume (a plan, a position); JSON-serialisable. */
  saveProgress?(): unknown;
  /** Take back what `saveProgress` returned, before `execute()` continues a resumed run. */
  restoreProgress?(progress: unknown): void;
  /**
   * Whether a step caught between its model call and the end of its tool calls may be finished by running the
   * model's remaining calls and continuing (true for ReAct-shaped steps, the default). False: the run resumes
   * from the start of that step instead.
   */
  readonly resumesMidStep?: boolean;
}
