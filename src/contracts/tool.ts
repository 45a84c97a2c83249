import type { LanguageModel, ModelCallOptions } from "./language-model.js";
import type { Message } from "./message.js";
import type { RunFolderHandle } from "./run-folder-handle.js";
import type { RunArtifact, RunRequest, RunUsage } from "./run-types.js";
import type { EventBus } from "./runtime-event.js";
import type { SessionArtifact } from "./session-artifact.js";

// The run's context, the tool contract and the executor contract refer to one another (a tool gets a context
// that lists the run's tools and its executor), so they live in one file: split, they would import in a circle.

export type JsonSchema = Record<string, unknown>;

export type SideEffects = "none" | "read" | "write" | "destructive" | "network" | "shell" | "unknown";

/** How a tool may be scheduled, interrupted and approved. */
export interface ToolExecutionSpec {
  concurrencySafe: boolean;
  interruptBehavior: "cancel" | "block";
  sideEffects: SideEffects;
  approvalMode: "inherit" | "never" | "always";
  defaultTimeoutMs: number | null;
  readsFiles: boolean;
  writesFiles: boolean;
  supportsStreaming: boolean;
}

export const DEFAULT_EXECUTION_SPEC: Readonly<ToolExecutionSpec> = Object.freeze({
  concurrencySafe: false,
  interruptBehavior: "cancel",
  sideEffects: "unknown",
  approvalMode: "inherit",
  defaultTimeoutMs: null,
  readsFiles: false,
  writesFiles: false,
  supportsStreaming: false,
});

/** Accepts the aliases `never_require` / `always_require` that older configs use. */
export function normalizeApprovalMode(mode: string | undefined): ToolExecutionSpec["approvalMode"] {
  if (mode === undefined || mode === "inherit") return "inherit";
  if (mode === "never" || mode === "never_require") return "never";
  if (mode === "always" || mode === "always_require") return "always";
  throw new TypeError(`approvalMode must be "inherit", "never" or "always", not "${mode}"`);
}

export type ValidationOutcome<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * What a tool sees besides its params: the run's context plus this call. Never part of the input schema. `TDeps`
 * is the type of the run's `deps` (`RunRequest.deps`); annotate a `defineTool` handler's context with it.
 */
export interface ToolContext<TDeps = unknown> extends RunContext<TDeps> {
  readonly toolCallId: string;
  readonly toolId: string;
  readonly arguments: Record<string, unknown>;
  /** `functionInvocationKwargs` of the run. */
  readonly kwargs: Record<string, unknown>;
  readonly session: { id: string; state: Record<string, unknown> };
  readonly metadata: Record<string, unknown>;
  /** Aborted when the run is cancelled or the call times out. */
  readonly signal: AbortSignal;
  /** The decision value when this call is replayed after a suspension. */
  readonly resumeInput: unknown;
  /** The run folder's `workspace/` when the run keeps run folders; the sandbox's workspace then. */
  readonly workspaceDir?: string | undefined;
  /** The run's folder when it keeps one: tools append to its `archive/` and `deliverables/`. */
  readonly runFolder?: RunFolderHandle | undefined;
  /** Stream a piece of text out as a `tool.delta` event. */
  emitDelta(text: string): void;
  /**
   * Record an event in the run's numbered log (the bus, `stream()`, `events.jsonl` see it), for a tool whose
   * work has events of its own (`tool.mcp.*`). Absent where a tool runs outside a run.
   */
  emitEvent?(kind: string, payload: Record<string, unknown>): void;
}

export type ToolStreamPart = { type: "delta"; text: string } | { type: "result"; data: unknown };

/**
 * The tool seam. `defineTool()` and `BaseTool` build it; the loop only needs these members. `TDeps` is the type
 * of the run's `deps` the tool reads from its context.
 */
export interface Tool<Params = Record<string, unknown>, Result = unknown, TDeps = unknown> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the params object sent to the model. */
  schema(): JsonSchema;
  executionSpec(): ToolExecutionSpec;
  invoke(params: Params, ctx: ToolContext<TDeps>): Result | Promise<Result>;
  /** Default true. False: a call that started but has no recorded result is not silently re-run on resume. */
  readonly durableIdempotent?: boolean;
  validateParams?(params: unknown): ValidationOutcome<Params> | Promise<ValidationOutcome<Params>>;
  requiresApproval?(params: Params, ctx: ToolContext<TDeps>): boolean | Promise<boolean>;
  beforeInvoke?(params: Params, ctx: ToolContext<TDeps>): void | Promise<void>;
  /** Runs after success and failure alike. */
  afterInvoke?(
    params: Params,
    ctx: ToolContext<TDeps>,
    result: unknown,
    error?: unknown,
  ): void | Promise<void>;
  /** Turn a failure into a result; return `undefined` to let the error stand. */
  fallback?(error: unknown, params: Params, ctx: ToolContext<TDeps>): unknown | Promise<unknown>;
  /** Runs once per session before its first turn; a `PermanentToolError` ends the run before the loop. */
  preflight?(ctx: RunContext): void | Promise<void>;
  getDependencies?(): string[];
  close?(): Promise<void>;
}

/** A tool that streams partial output (`tool.delta`) before its result. */
export interface StreamingTool<Params = Record<string, unknown>, TDeps = unknown>
  extends Tool<Params, unknown, TDeps> {
  invokeStream(params: Params, ctx: ToolContext<TDeps>): AsyncIterable<ToolStreamPart>;
}

export function isStreamingTool(tool: Tool): tool is StreamingTool {
  return typeof (tool as Partial<StreamingTool>).invokeStream === "function";
}

export interface BatchItem<Params = Record<string, unknown>> {
  itemId: string;
  params: Params;
}

export interface BatchResult {
  itemId: string;
  success: boolean;
  data?: unknown;
  error?: string;
  exception?: unknown;
}

/** A tool that runs many calls in one go (one MCP session, one multi-file read, …). */
export interface BatchTool<Params = Record<string, unknown>> extends Tool<Params> {
  invokeBatch(items: BatchItem<Params>[], ctx: ToolContext): Promise<BatchResult[]>;
}

export function isBatchTool(tool: Tool): tool is BatchTool {
  return typeof (tool as Partial<BatchTool>).invokeBatch === "function";
}

export type JobState = "pending" | "running" | "succeeded" | "failed" | "cancelled";

export interface JobHandle {
  jobId: string;
  toolId: string;
  status: JobState;
  createdAt: string;
}

export interface JobStatus {
  jobId: string;
  status: JobState;
  progress?: number;
  result?: unknown;
  error?: string;
}

/** A tool that submits long work and is polled for it. */
export interface BackgroundTool<Params = Record<string, unknown>> extends Tool<Params> {
  invokeBackground(params: Params, ctx: ToolContext): Promise<JobHandle>;
  pollJob(handle: JobHandle, ctx: ToolContext): Promise<JobStatus>;
  cancelJob(handle: JobHandle, ctx: ToolContext): Promise<boolean>;
}

export function isBackgroundTool(tool: Tool): tool is BackgroundTool {
  return typeof (tool as Partial<BackgroundTool>).invokeBackground === "function";
}

/** The structured result of Keel's builtin tools. */
export interface ToolResult<T = unknown> {
  ok: boolean;
  summary: string;
  data?: T;
  artifacts: { id: string; name: string; path?: string; bytes?: number }[];
  error?: { code: string; message: string };
}

export function isToolResult(value: unknown): value is ToolResult {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as ToolResult).ok === "boolean" &&
    typeof (value as ToolResult).summary === "string" &&
    Array.isArray((value as ToolResult).artifacts)
  );
}

export interface ToolResultRecord {
  toolCallId: string;
  toolId: string;
  result: unknown;
  success: boolean;
}

/** What patterns, hooks, memory and tools consume during a run; `TDeps` is the type of its `deps`. */
export interface RunContext<TDeps = unknown> {
  readonly agentId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly inputText: string;
  /** The run's `RunRequest.deps`: what the host gives this run's tools and middleware (a client, a user). */
  readonly deps: TDeps;
  /** The session's persisted state; `ctx.session.state` in a tool is this same object. */
  state: Record<string, unknown>;
  readonly tools: Readonly<Record<string, Tool>>;
  readonly llmClient: LanguageModel;
  readonly llmOptions: ModelCallOptions;
  readonly eventBus: EventBus;
  /** What memory injected for this run (e.g. `history`). */
  memoryView: Record<string, unknown>;
  readonly toolResults: ToolResultRecord[];
  /** Per-run scratch space; not persisted. */
  readonly scratch: Record<string, unknown>;
  readonly systemPromptFragments: string[];
  /** The run's transcript: the messages sent to the model, appended in place. */
  readonly transcript: Message[];
  readonly sessionArtifacts: SessionArtifact[];
  readonly assemblyMetadata: Record<string, unknown>;
  readonly runRequest: RunRequest<unknown, TDeps>;
  readonly toolExecutor: ToolExecutor;
  readonly usage: RunUsage;
  readonly artifacts: RunArtifact[];
}

export interface PolicyDecision {
  allowed: boolean;
  reason: string;
  metadata?: Record<string, unknown>;
}

export interface ToolExecutionRequest {
  toolId: string;
  tool: Tool;
  params: Record<string, unknown>;
  context: ToolContext;
  executionSpec: ToolExecutionSpec;
  metadata: Record<string, unknown>;
  /** Aborted when the run is cancelled or `abort()` is called; created on first use. */
  readonly signal: AbortSignal;
  /** Abort this call's signal (an executor's timeout does this so the tool can stop its work). */
  abort(reason: unknown): void;
  /**
   * Give the next attempt a signal that is not aborted, after an executor's timeout aborted this one; nothing
   * when the run itself was cancelled. A retrying executor calls it before it decides on another attempt.
   */
  renewSignal?(): void;
  /** Whether the run was cancelled (or this attempt aborted); cheaper than reading `signal`. */
  readonly cancelled: boolean;
  /** Register a callback for the run's cancellation; returns the unregister function. */
  onCancel(callback: (reason: unknown) => void): () => void;
  /** Set by the tool stage for a background tool's call: where the call keeps its job's handle. */
  backgroundJob?: BackgroundJobSlot | undefined;
}

/**
 * Where a background tool's call keeps the handle of its job. The run records it (and a durable run checkpoints
 * it), so a resumed call polls the job it already submitted instead of submitting another.
 */
export interface BackgroundJobSlot {
  /** The job this call submitted earlier, if any: poll it rather than submit again. */
  readonly handle: JobHandle | undefined;
  /** A job was submitted for the call: record it (`tool.background.submitted`) before polling it. */
  submitted(handle: JobHandle): Promise<void>;
  /** The job ended or was cancelled: a later attempt of the call submits a new one. */
  finished(): void;
}

export interface ToolExecutionResult {
  toolId: string;
  success: boolean;
  data?: unknown;
  error?: string;
  exception?: unknown;
  metadata: Record<string, unknown>;
}

/** The tool-executor seam: how one call runs (timeouts, cancellation, retries). */
export interface ToolExecutor {
  execute(request: ToolExecutionRequest): Promise<ToolExecutionResult>;
  close?(): Promise<void>;
}

/** An executor that restricts what may run; a denial ends only that call. */
export interface PolicyToolExecutor extends ToolExecutor {
  evaluatePolicy(request: ToolExecutionRequest): PolicyDecision | Promise<PolicyDecision>;
}

export function isPolicyToolExecutor(executor: ToolExecutor): executor is PolicyToolExecutor {
  return typeof (executor as Partial<PolicyToolExecutor>).evaluatePolicy === "function";
}

/** An executor that runs the allowed calls of a step together (parallel mode). */
export interface BatchToolExecutor extends ToolExecutor {
  executeBatch(requests: ToolExecutionRequest[]): Promise<ToolExecutionResult[]>;
}

export function isBatchToolExecutor(executor: ToolExecutor): executor is BatchToolExecutor {
  return typeof (executor as Partial<BatchToolExecutor>).executeBatch === "function";
}

/** What `executeStream` yields: the tool's deltas as they come, then one final result. */
export type ToolExecutionStreamPart =
  | { type: "delta"; text: string }
  | { type: "result"; result: ToolExecutionResult };

/** An executor that runs a streaming tool's call as a stream: the deltas, then the call's result. */
export interface StreamingToolExecutor extends ToolExecutor {
  executeStream(request: ToolExecutionRequest): AsyncIterable<ToolExecutionStreamPart>;
}

export function isStreamingToolExecutor(executor: ToolExecutor): executor is StreamingToolExecutor {
  return typeof (executor as Partial<StreamingToolExecutor>).executeStream === "function";
}
