import {
  isStreamingTool,
  isStreamingToolExecutor,
  type ToolExecutionRequest,
  type ToolExecutionResult,
  type ToolExecutionStreamPart,
  type ToolExecutor,
} from "../contracts/tool.js";
import { ToolError } from "../errors/error-classes.js";

/**
 * Run one call through `executor`. A streaming tool goes through the executor's `executeStream` when it has one:
 * each delta it yields becomes a `tool.delta` event (`ctx.emitDelta`) and its last part is the result. Anything
 * else — and every call of an executor without `executeStream` — goes through `execute`.
 */
export function executeToolCall(
  executor: ToolExecutor,
  request: ToolExecutionRequest,
): Promise<ToolExecutionResult> {
  if (!isStreamingTool(request.tool) || !isStreamingToolExecutor(executor)) return executor.execute(request);
  return drain(executor.executeStream(request), request);
}

/**
 * A wrapping executor's stream of one call through its inner executor: the inner's `executeStream`, else
 * `execute`'s result alone (whose deltas went out through `ctx.emitDelta` meanwhile).
 */
export function executeStreamOf(
  executor: ToolExecutor,
  request: ToolExecutionRequest,
): AsyncIterable<ToolExecutionStreamPart> {
  return isStreamingToolExecutor(executor) ? executor.executeStream(request) : resultOnly(executor, request);
}

/** The result of a stream that ended without one: a failed call, never a missing result. */
export function missingResult(request: ToolExecutionRequest): ToolExecutionResult {
  const exception = new ToolError(
    `The executor's stream for tool '${request.toolId}' ended without a result`,
    {
      context: { toolId: request.toolId },
      hint: "An executeStream must yield a { type: 'result' } part last",
    },
  );
  return { toolId: request.toolId, success: false, error: exception.message, exception, metadata: {} };
}

async function drain(
  parts: AsyncIterable<ToolExecutionStreamPart>,
  request: ToolExecutionRequest,
): Promise<ToolExecutionResult> {
  let result: ToolExecutionResult | undefined;
  for await (const part of parts) {
    if (part.type === "delta") request.context.emitDelta(part.text);
    else result = part.result;
  }
  return result ?? missingResult(request);
}

async function* resultOnly(
  executor: ToolExecutor,
  request: ToolExecutionRequest,
): AsyncIterable<ToolExecutionStreamPart> {
  yield { type: "result", result: await executor.execute(request) };
}
