import { z } from "zod";
import {
  isBackgroundTool,
  isStreamingTool,
  isToolResult,
  type StreamingToolExecutor,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutionStreamPart,
  type ToolStreamPart,
} from "../../contracts/tool.js";
import { ToolCancelledError, ToolError, ToolTimeoutError } from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import { builtOnFirstUse } from "../../util/built-on-first-use.js";
import { deadlines } from "../../util/deadline-queue.js";
import { type BackgroundPollOptions, DEFAULT_BACKGROUND_POLL, runBackgroundJob } from "../background-job.js";
import { isSuspendToolCall } from "../suspend-tool-call.js";

export const safeToolExecutorConfigSchema = builtOnFirstUse(() =>
  z.object({
    default_timeout_ms: z.number().int().positive().default(30_000),
    /** A background tool's job: the first wait before polling it, doubled after each poll up to the max. */
    poll_initial_delay_ms: z.number().int().positive().default(DEFAULT_BACKGROUND_POLL.initialDelayMs),
    poll_max_delay_ms: z.number().int().positive().default(DEFAULT_BACKGROUND_POLL.maxDelayMs),
  }),
);

export type SafeToolExecutorConfig = z.input<ReturnType<typeof safeToolExecutorConfigSchema>>;

/**
 * Runs a tool and races it against its timeout (the tool's `defaultTimeoutMs`, else the executor's) and the
 * run's cancellation. A tool with `interruptBehavior: "block"` is waited for whatever happens. A background
 * tool's job is submitted and polled within that race (`runBackgroundJob`), so the timeout and the cancellation
 * bound the whole job and cancel it. Never throws: failures come back as `success: false` with the error in
 * `exception`.
 */
export class SafeToolExecutor implements StreamingToolExecutor {
  readonly defaultTimeoutMs: number;
  readonly poll: BackgroundPollOptions;

  constructor(config: SafeToolExecutorConfig = {}) {
    const parsed = safeToolExecutorConfigSchema().parse(config);
    this.defaultTimeoutMs = parsed.default_timeout_ms;
    this.poll = {
      initialDelayMs: parsed.poll_initial_delay_ms,
      maxDelayMs: Math.max(parsed.poll_initial_delay_ms, parsed.poll_max_delay_ms),
    };
  }

  execute(request: ToolExecutionRequest): Promise<ToolExecutionResult> {
    return this.run(request, undefined);
  }

  /**
   * A streaming tool's deltas as they come, then the call's result — the same race as `execute`, whose deltas
   * go out through `ctx.emitDelta` instead. Deltas a tool sends after its call ended (a timeout) are dropped.
   */
  async *executeStream(request: ToolExecutionRequest): AsyncIterable<ToolExecutionStreamPart> {
    const deltas: string[] = [];
    let result: ToolExecutionResult | undefined;
    let wake: (() => void) | null = null;
    const pending = this.run(request, (text) => {
      if (result !== undefined) return;
      deltas.push(text);
      wake?.();
    });
    void pending.then((settled) => {
      result = settled;
      wake?.();
    });
    for (;;) {
      while (deltas.length > 0) yield { type: "delta", text: deltas.shift()! };
      if (result !== undefined) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
    yield { type: "result", result };
  }

  private run(
    request: ToolExecutionRequest,
    onDelta: ((text: string) => void) | undefined,
  ): Promise<ToolExecutionResult> {
    const timeoutMs = request.executionSpec.defaultTimeoutMs ?? this.defaultTimeoutMs;
    if (request.cancelled && request.executionSpec.interruptBehavior !== "block") {
      return Promise.resolve(cancellation(request, timeoutMs));
    }
    let value: unknown;
    try {
      const tool = request.tool;
      if (isBackgroundTool(tool)) value = runBackgroundJob(tool, request, this.poll);
      else if (isStreamingTool(tool))
        value = consumeToolStream(
          tool.invokeStream(request.params, request.context),
          request,
          onDelta ?? ((text) => request.context.emitDelta(text)),
        );
      else value = tool.invoke(request.params, request.context);
    } catch (error) {
      return Promise.resolve(failure(request, error, timeoutMs));
    }
    if (!isPromiseLike(value)) return Promise.resolve(success(request, value, timeoutMs));
    if (request.executionSpec.interruptBehavior === "block") {
      return Promise.resolve(value).then(
        (data) => success(request, data, timeoutMs),
        (error) => failure(request, error, timeoutMs),
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
      finish(failure(request, error, timeoutMs));
    });
    unregister = request.onCancel((reason) => finish(cancellation(request, timeoutMs, reason)));
    if (settled) unregister();
    value.then(
      (data) => finish(success(request, data, timeoutMs)),
      (error) => finish(failure(request, error, timeoutMs)),
    );
  });
}

/** A streaming tool's deltas go to `onDelta` (`tool.delta` events); its `result` part (or the joined text) is the data. */
async function consumeToolStream(
  parts: AsyncIterable<ToolStreamPart>,
  request: ToolExecutionRequest,
  onDelta: (text: string) => void,
): Promise<unknown> {
  let text = "";
  let result: unknown;
  let hasResult = false;
  for await (const part of parts) {
    if (part.type === "delta") {
      text += part.text;
      onDelta(part.text);
    } else {
      result = part.data;
      hasResult = true;
    }
    if (request.cancelled && request.executionSpec.interruptBehavior !== "block") break;
  }
  return hasResult ? result : text;
}

function noop(): void {}

/** Why the call was cut off, in the words of what stopped the run: a timeout is not a user's cancellation. */
function cancelledError(request: ToolExecutionRequest, reason: unknown): ToolCancelledError {
  const termination = reason as { type?: unknown; value?: unknown } | undefined;
  if (termination?.type === "stopped" && termination.value === "timeout") {
    return new ToolCancelledError(`Tool '${request.toolId}' was stopped: the run ran out of time`, {
      hint: "Raise runtime.step_timeout_ms (or budget.maxDurationMs), or make the tool faster",
    });
  }
  if (termination?.type === "stopped" && typeof termination.value === "string") {
    return new ToolCancelledError(
      `Tool '${request.toolId}' was stopped: the run stopped (${termination.value})`,
    );
  }
  return new ToolCancelledError(`Tool '${request.toolId}' cancelled before completion`);
}

/**
 * A returned value as an execution result: a ToolResult whose `ok` is false is an unsuccessful call that keeps its
 * result (`success = ok`), so the model still sees its summary and data — a command's stderr, say.
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

/** A call cancelled before it completed: a `ToolCancelledError` failure whose metadata says `cancelled`. */
function cancellation(
  request: ToolExecutionRequest,
  timeoutMs: number,
  reason?: unknown,
): ToolExecutionResult {
  const result = failure(request, cancelledError(request, reason), timeoutMs);
  result.metadata.cancelled = true;
  return result;
}

function failure(request: ToolExecutionRequest, error: unknown, timeoutMs: number): ToolExecutionResult {
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
  return {
    toolId: request.toolId,
    success: false,
    error: exception.message,
    exception,
    metadata: { timeoutMs },
  };
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
