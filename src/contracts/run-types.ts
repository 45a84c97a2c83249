import type { StandardSchemaV1 } from "@standard-schema/spec";
import type { ErrorDetails, KeelError } from "../errors/keel-error.js";

export type RunStatus = "created" | "running" | "waiting" | "done";

export type ToolCallStatus =
  | "new"
  | "running"
  | "suspended"
  | "resuming"
  | "succeeded"
  | "failed"
  | "cancelled";

export type StopReason =
  | "completed"
  | "failed"
  | "cancelled"
  | "timeout"
  | "max_steps"
  | "budget_exhausted"
  | "suspended";

export const STOP_REASONS: readonly StopReason[] = [
  "completed",
  "failed",
  "cancelled",
  "timeout",
  "max_steps",
  "budget_exhausted",
  "suspended",
];

/** Why the loop ended, kept in `RunResult.termination`. */
export type TerminationReason =
  | { type: "natural_end" }
  | { type: "behavior_requested"; value?: string }
  | { type: "stopped"; value: string }
  | { type: "cancelled"; value?: string }
  | { type: "blocked"; value: string }
  | { type: "suspended" }
  | { type: "error"; value: string };

export type ResumeMode = "replay_tool_call" | "use_decision_as_tool_result" | "pass_decision_to_tool";

export interface SuspendedToolCall {
  toolCallId: string;
  toolId: string;
  params: Record<string, unknown>;
  reason?: string;
  resumeMode: ResumeMode;
  responseSchema?: Record<string, unknown>;
}

export interface RunBudget {
  maxSteps?: number;
  maxDurationMs?: number;
  maxToolCalls?: number;
  /** Total input + output tokens for the run. */
  maxTotalTokens?: number;
  maxValidationRetries?: number;
  maxCostUsd?: number;
  maxResumeAttempts?: number;
}

/** What a run's tokens cost in USD, by kind of token. */
export interface CostBreakdown {
  input: number;
  output: number;
  /** Input tokens read from the provider's prompt cache. */
  cachedRead: number;
  /** Input tokens written to the provider's prompt cache. */
  cachedWrite: number;
}

export interface RunUsage {
  llmCalls: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  inputTokensCached: number;
  inputTokensCacheCreation: number;
  reasoningTokens: number;
  costUsd: number | null;
  costBreakdown: CostBreakdown;
}

export function createRunUsage(): RunUsage {
  return {
    llmCalls: 0,
    toolCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    inputTokensCached: 0,
    inputTokensCacheCreation: 0,
    reasoningTokens: 0,
    costUsd: 0,
    costBreakdown: { input: 0, output: 0, cachedRead: 0, cachedWrite: 0 },
  };
}

export interface RunArtifact {
  name: string;
  kind: string;
  payload: unknown;
  metadata: Record<string, unknown>;
}

/** Any Standard Schema (zod 3.24+, zod 4, valibot, arktype, …). */
export type OutputType<T = unknown> = StandardSchemaV1<unknown, T>;

/**
 * An agent definition given in code, as `defineAgent` returns it. Named as a run's `agentId`, it types the run:
 * its `output_type` is the type of the run's output, and the `deps` its tools read are the type of the run's.
 */
export interface AgentRef<T = unknown, TDeps = unknown> {
  readonly id: string;
  readonly output_type?: OutputType<T> | undefined;
  /** Types only, never set: the `deps` the agent's tools read (`defineAgent` infers it from them). */
  readonly "~deps"?: TDeps | undefined;
}

/** The id of the agent a run names. */
export function agentIdOf(agent: string | { readonly id: string }): string {
  return typeof agent === "string" ? agent : agent.id;
}

/** `T` is the type of the run's final output (from `outputType`, or the agent's `output_type`); `TDeps` of `deps`. */
/** A run's W3C trace context (`traceparent`, and `tracestate` when there is one), as a checkpoint stores it. */
export interface RunTraceContext {
  traceparent: string;
  tracestate?: string;
}

export interface RunRequest<T = unknown, TDeps = unknown> {
  /** The agent's id, or its definition (`defineAgent`), which then types the run's output. */
  agentId: string | AgentRef<T, TDeps>;
  sessionId?: string;
  inputText: string;
  runId?: string;
  parentRunId?: string;
  metadata?: Record<string, unknown>;
  contextHints?: Record<string, unknown>;
  budget?: RunBudget;
  /**
   * The run's dependencies, for its tools and middleware (`ctx.deps`); never sent to the model. Typed by the
   * agent when `agentId` is a `defineAgent` agent whose tools read them.
   */
  deps?: NoInfer<TDeps>;
  /** Validates the final output (the agent's `output_type` when absent) and types it. */
  outputType?: OutputType<T>;
  durable?: boolean;
  resumeFromCheckpoint?: string;
  /**
   * With `resumeFromCheckpoint`: start a new run from the checkpoint (`parentRunId` its run) instead of
   * continuing the checkpoint's run. Only its latest checkpoint continues a run; any other is refused unless
   * the resume branches (this, or a `runId` of its own).
   */
  branch?: boolean;
  /** Values for tools and function middleware only (`ctx.kwargs`). */
  functionInvocationKwargs?: Record<string, unknown>;
  /** Values for the model client and chat middleware only. */
  clientKwargs?: Record<string, unknown>;
  /** Aborting it cancels the run. */
  signal?: AbortSignal;
  /**
   * The trace a new run joins, from whoever started it (a host in another process): a tracing event bus makes
   * the run's span a child of the span this names. A resumed run ignores it and continues its own trace.
   */
  traceContext?: RunTraceContext;
  /**
   * Input that reaches the run while it is going — a follow-up message from the user — asked for before each
   * model call; what it returns is appended to the transcript as user messages, in order, so the next call sees
   * it. A function, so it lives in this process only: a queued run (`submit`) does not carry it.
   */
  steering?: RunSteering;
}

/** Asked before each model call of a run for the user messages that arrived since; `[]` when none did. */
export type RunSteering = (signal: AbortSignal) => Promise<readonly string[]>;

export interface RunResult<T = unknown> {
  runId: string;
  finalOutput: T | null;
  stopReason: StopReason;
  termination: TerminationReason;
  pendingToolCalls: SuspendedToolCall[];
  usage: RunUsage;
  artifacts: RunArtifact[];
  error?: string;
  errorDetails?: ErrorDetails;
  /** The error itself; exists only in the process that ran the run. */
  exception?: KeelError;
  metadata: Record<string, unknown>;
}

export interface RunRecord {
  runId: string;
  agentId: string;
  sessionId: string;
  parentRunId?: string;
  /** What the user asked: the request's `inputText` (a resume keeps the input of the run it continues). */
  inputText?: string;
  status: RunStatus;
  stopReason?: StopReason;
  termination?: TerminationReason;
  pendingToolCalls: SuspendedToolCall[];
  createdAt: string;
  updatedAt: string;
  lastSequence: number;
}
