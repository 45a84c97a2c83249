import type { ModelRequest, ModelStopReason, ModelUsage } from "./language-model.js";
import type { ReasoningPart, ToolCall } from "./message.js";
import type { ResumeMode, RunResult, ToolCallStatus } from "./run-types.js";
import type { JobHandle, RunContext } from "./tool.js";

/** The nine phases of a run, in the order they occur. */
export const PHASES = [
  "runStart",
  "stepStart",
  "beforeInference",
  "afterInference",
  "toolGate",
  "beforeToolExecute",
  "afterToolExecute",
  "stepEnd",
  "runEnd",
] as const;

export type Phase = (typeof PHASES)[number];

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  reasoning: ReasoningPart[];
  usage: ModelUsage | undefined;
  stopReason: ModelStopReason;
  model: string;
}

/** A tool call as the step tracks it. */
export interface ToolCallState {
  readonly id: string;
  readonly toolId: string;
  params: Record<string, unknown>;
  status: ToolCallStatus;
  /** Whether the call produced a usable result (`succeeded`). */
  result?: unknown;
  error?: { code: string; message: string; hint?: string };
  suspension?: { reason?: string; resumeMode: ResumeMode; responseSchema?: Record<string, unknown> };
  resumeInput?: unknown;
  /** Set when parsing the model's arguments failed. */
  argumentsError?: string;
  /** A background tool's job while it runs: a resumed call polls it instead of submitting another. */
  job?: JobHandle;
}

export type ToolGateDecision =
  | { action: "allow" }
  | { action: "block"; reason: string }
  | { action: "suspend"; reason?: string; resumeMode?: ResumeMode; responseSchema?: Record<string, unknown> }
  | { action: "setResult"; result: unknown };

/** What a hook receives. Fields beyond `phase`, `run` and `step` are set in the phases they belong to. */
export interface HookContext {
  readonly phase: Phase;
  readonly run: RunContext;
  readonly step: number;
  /** beforeInference may replace `request.messages`, `request.tools` or options; afterInference reads it. */
  request?: ModelRequest;
  /** afterInference may change `response.toolCalls`. */
  response?: ModelResponse;
  /** The call, in beforeToolExecute and afterToolExecute. */
  call?: ToolCallState;
  /** The run's result, in runEnd. */
  result?: RunResult;
  /** Ask the run to end after this phase (`BehaviorRequested`). */
  requestStop(reason?: string): void;
}

/** The hook seam: any subset of the nine phases. */
export interface Hook {
  runStart?(ctx: HookContext): void | Promise<void>;
  stepStart?(ctx: HookContext): void | Promise<void>;
  beforeInference?(ctx: HookContext): void | Promise<void>;
  afterInference?(ctx: HookContext): void | Promise<void>;
  toolGate?(
    ctx: HookContext,
    call: ToolCallState,
  ): ToolGateDecision | undefined | Promise<ToolGateDecision | undefined>;
  beforeToolExecute?(ctx: HookContext): void | Promise<void>;
  afterToolExecute?(ctx: HookContext): void | Promise<void>;
  stepEnd?(ctx: HookContext): void | Promise<void>;
  runEnd?(ctx: HookContext): void | Promise<void>;
}
