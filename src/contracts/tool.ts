import type { RunFolder } from "../run-folders/run-folder.js";
import type { RunContext } from "./run-context.js";

export type JsonSchema = Record<string, unknown>;

export type SideEffects = "none" | "read" | "write" | "destructive" | "network" | "shell" | "unknown";

/** How a tool may be scheduled, interrupted and approved (TL-2). */
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

/** Accepts the seed's aliases `never_require` / `always_require`. */
export function normalizeApprovalMode(mode: string | undefined): ToolExecutionSpec["approvalMode"] {
  if (mode === undefined || mode === "inherit") return "inherit";
  if (mode === "never" || mode === "never_require") return "never";
  if (mode === "always" || mode === "always_require") return "always";
  throw new TypeError(`approvalMode must be "inherit", "never" or "always", not "${mode}"`);
}

export type ValidationOutcome<T> = { ok: true; value: T } | { ok: false; error: string };

/** What a tool sees besides its params: the run's context plus this call. Never part of the input schema. */
export interface ToolContext extends RunContext {
  readonly toolCallId: string;
  readonly toolId: string;
  readonly arguments: Record<string, unknown>;
  /** `functionInvocationKwargs` of the run (CX-1). */
  readonly kwargs: Record<string, unknown>;
  readonly session: { id: string; state: Record<string, unknown> };
  readonly metadata: Record<string, unknown>;
  /** Aborted when the run is cancelled or the call times out. */
  readonly signal: AbortSignal;
  /** The decision value when this call is replayed after a suspension. */
  readonly resumeInput: unknown;
  /** The run folder's `workspace/` when the run keeps run folders (SB-6); the sandbox's workspace then. */
  readonly workspaceDir?: string | undefined;
  /** The run's folder when it keeps one (SB-6): tools append to its `archive/` and `deliverables/`. */
  readonly runFolder?: RunFolder | undefined;
  /** Stream a piece of text out as a `tool.delta` event. */
  emitDelta(text: string): void;
  /**
   * Record an event in the run's numbered log (the bus, `stream()`, `events.jsonl` see it), for a tool whose
   * work has events of its own (`tool.mcp.*`). Absent where a tool runs outside a run.
   */
  emitEvent?(kind: string, payload: Record<string, unknown>): void;
}

export type ToolStreamPart = { type: "delta"; text: string } | { type: "result"; data: unknown };

/** The tool seam. `defineTool()` and `BaseTool` build it; the loop only needs these members. */
export interface Tool<Params = Record<string, unknown>, Result = unknown> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema of the params object sent to the model. */
  schema(): JsonSchema;
  executionSpec(): ToolExecutionSpec;
  invoke(params: Params, ctx: ToolContext): Result | Promise<Result>;
  /** Default true. False: a call that started but has no recorded result is not silently re-run on resume. */
  readonly durableIdempotent?: boolean;
  validateParams?(params: unknown): ValidationOutcome<Params> | Promise<ValidationOutcome<Params>>;
  requiresApproval?(params: Params, ctx: ToolContext): boolean | Promise<boolean>;
  beforeInvoke?(params: Params, ctx: ToolContext): void | Promise<void>;
  /** Runs after success and failure alike. */
  afterInvoke?(params: Params, ctx: ToolContext, result: unknown, error?: unknown): void | Promise<void>;
  /** Turn a failure into a result; return `undefined` to let the error stand. */
  fallback?(error: unknown, params: Params, ctx: ToolContext): unknown | Promise<unknown>;
  /** Runs once per session before its first turn; a `PermanentToolError` ends the run before the loop. */
  preflight?(ctx: RunContext): void | Promise<void>;
  getDependencies?(): string[];
  close?(): Promise<void>;
}

/** A tool that streams partial output (`tool.delta`) before its result. */
export interface StreamingTool<Params = Record<string, unknown>> extends Tool<Params> {
  invokeStream(params: Params, ctx: ToolContext): AsyncIterable<ToolStreamPart>;
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

/** The structured result of Keel's builtin tools (SB-5). */
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
