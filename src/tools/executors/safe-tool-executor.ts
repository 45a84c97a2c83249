import { z } from "zod";
import { ToolCancelledError, ToolError, ToolTimeoutError } from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import { deadlines } from "../../util/deadline-queue.js";
import { isSuspendToolCall } from "../suspend-tool-call.js";
import { isStreamingTool, isToolResult, type ToolStreamPart } from "../tool.js";
import type { ToolExecutionRequest, ToolExecutionResult, ToolExecutor } from "../tool-executor.js";

export const safeToolExecutorConfigSchema = z.object({
  default_timeout_ms: z.number().int().positive().default(30_000),
});

export type SafeToolExecutorConfig = z.input<typeof safeToolExecutorConfigSchema>;

/**
 * Runs a tool and races it against its timeout (the tool's `defaultTimeoutMs`, else the executor's) and the
 * run's cancellation. A tool with `interruptBehavior: "block"` is waited for whatever happens. Never throws:
 * failures come back as `success: false` with the error in `exception`.
 */
export class SafeToolExecutor implements ToolExecutor {
  readonly defaultTimeoutMs: number;

  constructor(config: SafeToolExecutorConfig = {}) {
    this.defaultTimeoutMs = safeToolExecutorConfigSchema.parse(config).default_timeout_ms;
  }

  execute(request: ToolExecutionRequest): Promise<ToolExecutionResult> {
    const timeoutMs = request.executionSpec.defaultTimeoutMs ?? this.defaultTimeoutMs;
    if (request.cancelled && request.executionSpec.interruptBehavior !== "block") {
      return Promise.resolve(failure(request, cancelledError(request), timeoutMs, true));
    }
    let value: unknown;
    try {
      const tool = request.tool;
      value = isStreamingTool(tool)
        ? consumeToolStream(tool.invokeStream(request.params, request.context), request)
        : tool.invoke(request.params, request.context);
    } catch (error) {
      return Promise.resolve(failure(request, error, timeoutMs, false));
    }
    if (!isPromiseLike(value)) return Promise.resolve(success(request, value, timeoutMs));
    if (request.executionSpec.interruptBehavior === "block") {
      return Promise.resolve(value).then(
        (data) => success(request, data, timeoutMs),
        (error) => failure(request, error, timeoutMs, false),
      );
    }
    return race(request, value, timeoutMs);
  }
}

function race(
  request: ToolExecutionRequest,
  value: PromiseLike<unknown>,
  timeoutMs: number,
): Promise<ToolExecutionResult> {
  return new Promise<ToolExecutionResult>((resolve) => {
    let settled = false;
    // Assigned below; a tool that cancels its run synchronously makes onCancel call back before that.
    let unregister: () => void = noop;
    const finish = (result: ToolExecutionResult) => {
      if (settled) return;
      settled = true;
      deadline.cancel();
      unregister();
      resolve(result);
    };
    const deadline = deadlines.add(timeoutMs, () => {
      const error = new ToolTimeoutError(`Tool '${request.toolId}' timed out after ${timeoutMs} ms`, {
        timeoutMs,
        hint: "Raise the tool's timeoutMs or the executor's default_timeout_ms, or make the tool faster",
      });
      request.abort(error);
      finish(failure(request, error, timeoutMs, false));
    });
    unregister = request.onCancel(() => finish(failure(request, cancelledError(request), timeoutMs, true)));
    if (settled) unregister();
    value.then(
      (data) => finish(success(request, data, timeoutMs)),
      (error) => finish(failure(request, error, timeoutMs, false)),
    );
  });
}

/** A streaming tool's deltas become `tool.delta` events; its `result` part (or the joined text) is the data. */
async function consumeToolStream(
  parts: AsyncIterable<ToolStreamPart>,
  request: ToolExecutionRequest,
): Promise<unknown> {
  let text = "";
  let result: unknown;
  let hasResult = false;
  for await (const part of parts) {
    if (part.type === "delta") {
      text += part.text;
      request.context.emitDelta(part.text);
    } else {
      result = part.data;
      hasResult = true;
    }
    if (request.cancelled && request.executionSpec.interruptBehavior !== "block") break;
  }
  return hasResult ? result : text;
}

function noop(): void {}

function cancelledError(request: ToolExecutionRequest): ToolCancelledError {
  return new ToolCancelledError(`Tool '${request.toolId}' cancelled before completion`);
}

/**
 * A returned value as an execution result: a ToolResult whose `ok` is false is an unsuccessful call that keeps its
 * result (SB-5: `success = ok`), so the model still sees its summary and data — a command's stderr, say.
 */
function success(request: ToolExecutionRequest, data: unknown, timeoutMs: number): ToolExecutionResult {
  if (isToolResult(data) && !data.ok) {
    return {
      toolId: request.toolId,
      success: false,
      data,
      error: data.error?.message ?? data.summary,
      metadata: { timeoutMs },
    };
  }
  return { toolId: request.toolId, success: true, data, metadata: { timeoutMs } };
}

function failure(
  request: ToolExecutionRequest,
  error: unknown,
  timeoutMs: number,
  cancelled: boolean,
): ToolExecutionResult {
  if (isSuspendToolCall(error)) {
    return {
      toolId: request.toolId,
      success: false,
      error: "suspended",
      exception: error,
      metadata: { timeoutMs },
    };
  }
  const exception = asToolError(error, request.toolId);
  const metadata: Record<string, unknown> = { timeoutMs };
  if (cancelled) metadata.cancelled = true;
  return { toolId: request.toolId, success: false, error: exception.message, exception, metadata };
}

/** Keel errors stand as they are; anything else a tool throws becomes a `ToolError` keeping the cause. */
export function asToolError(error: unknown, toolId: string): KeelError {
  if (KeelError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const retryable =
    typeof error === "object" && error !== null && (error as { retryable?: unknown }).retryable === true;
  return new ToolError(message || `Tool '${toolId}' failed`, {
    cause: error,
    retryable,
    context: { toolId },
  });
}

export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as PromiseLike<unknown>).then === "function"
  );
}
