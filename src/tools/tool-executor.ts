import type { Tool, ToolContext, ToolExecutionSpec, ToolStreamPart } from "./tool.js";

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
  /** Whether the run was cancelled; cheaper than reading `signal`. */
  readonly cancelled: boolean;
  /** Register a callback for the run's cancellation; returns the unregister function. */
  onCancel(callback: (reason: unknown) => void): () => void;
}

export interface ToolExecutionResult {
  toolId: string;
  success: boolean;
  data?: unknown;
  error?: string;
  exception?: unknown;
  metadata: Record<string, unknown>;
}

/** The tool-executor seam (TL-3): how one call runs (timeouts, cancellation, retries). */
export interface ToolExecutor {
  execute(request: ToolExecutionRequest): Promise<ToolExecutionResult>;
  close?(): Promise<void>;
}

/** An executor that restricts what may run; a denial ends only that call (LC-7). */
export interface PolicyToolExecutor extends ToolExecutor {
  evaluatePolicy(request: ToolExecutionRequest): PolicyDecision | Promise<PolicyDecision>;
}

export function isPolicyToolExecutor(executor: ToolExecutor): executor is PolicyToolExecutor {
  return typeof (executor as Partial<PolicyToolExecutor>).evaluatePolicy === "function";
}

/** An executor that runs the allowed calls of a step together (parallel mode, LC-7). */
export interface BatchToolExecutor extends ToolExecutor {
  executeBatch(requests: ToolExecutionRequest[]): Promise<ToolExecutionResult[]>;
}

export function isBatchToolExecutor(executor: ToolExecutor): executor is BatchToolExecutor {
  return typeof (executor as Partial<BatchToolExecutor>).executeBatch === "function";
}

export interface StreamingToolExecutor extends ToolExecutor {
  executeStream(request: ToolExecutionRequest): AsyncIterable<ToolStreamPart>;
}

export function isStreamingToolExecutor(executor: ToolExecutor): executor is StreamingToolExecutor {
  return typeof (executor as Partial<StreamingToolExecutor>).executeStream === "function";
}
