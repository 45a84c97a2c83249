import type { JobHandle, Tool, ToolContext, ToolExecutionSpec } from "./tool.js";

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
