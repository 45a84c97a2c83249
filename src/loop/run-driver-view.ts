import type { HookContext, Phase, ToolCallState } from "../contracts/hook.js";
import type { Message } from "../contracts/message.js";
import type { RunRequest } from "../contracts/run-types.js";
import type { RunContext, Tool } from "../contracts/tool.js";
import type { RunEventLog } from "../events/run-event-log.js";
import type { EffectivePolicy } from "../permissions/effective-policy.js";
import type { RunFolder } from "../run-folders/run-folder.js";
import type { CancelScope } from "./cancel-scope.js";
import type { StickyAction } from "./decisions.js";
import type { ResolvedAgent } from "./resolved-agent.js";
import type { CheckpointPhase } from "./run-state.js";
import type { ToolCallContext } from "./tool-call-context.js";

/** What a run driver is made of. */
export interface RunDriverInit {
  agent: ResolvedAgent;
  ctx: RunContext;
  log: RunEventLog;
  scope: CancelScope;
  limits: RunLimits;
  /** The run's whole request (default `ctx.runRequest`, which lacks the kwargs buckets). */
  request?: RunRequest;
}

export interface RunLimits {
  maxSteps: number;
  maxToolCalls: number | undefined;
  maxTotalTokens: number | undefined;
  maxCostUsd: number | undefined;
  stepTimeoutMs: number;
}

/**
 * What the tool stage needs of the run's driver. The driver runs the tool stage and the stage calls back into the
 * driver; the stage sees the driver through this interface, so the two modules do not import each other.
 * `RunDriver` implements it.
 */
export interface RunDriverView {
  readonly agent: ResolvedAgent;
  readonly ctx: RunContext;
  readonly log: RunEventLog;
  readonly scope: CancelScope;
  readonly limits: RunLimits;
  readonly largeOutputBytes: number;
  durable: boolean;
  owesCheckpoint: boolean;
  policy: EffectivePolicy | undefined;
  runFolder: RunFolder | undefined;
  stopRequested: string | null;
  inFlight: readonly ToolCallState[];
  checkpoint(phase: CheckpointPhase, final?: { output: unknown }): Promise<unknown>;
  toolCallContext(state: ToolCallState, tool: Tool, resumeInput: unknown): ToolCallContext;
  hookContext(phase: Phase, call?: ToolCallState): HookContext;
  warnNotIdempotent(toolId: string): void;
  suspendWith(states: ToolCallState[]): void;
  stickyDecision(toolId: string): StickyAction | undefined;
  refreshPolicy(): void;
  noteToolStep(states: readonly ToolCallState[]): void;
  appendMessage(message: Message): void;
}
