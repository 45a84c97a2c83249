// The module's `performance`, not the global one: in Node 20 the global is a getter, read per call.
import { performance } from "node:perf_hooks";
import type { ToolCallState } from "../contracts/hook.js";
import type { ResumeMode } from "../contracts/run-types.js";
import {
  isBackgroundTool,
  isToolResult,
  type ToolExecutionResult,
  type ToolResult,
} from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { getLogger } from "../logging/logger.js";
import type { ToolCallOutcome } from "../patterns/pattern.js";
import { offloadLargeOutput } from "../run-folders/large-output.js";
import { summarizeValue, type ToolLogLine } from "../run-folders/run-folder.js";
import { asToolError } from "../tools/executors/safe-tool-executor.js";
import { formatToolError, formatToolResult } from "../tools/format-tool-result.js";
import { isSuspendToolCall } from "../tools/suspend-tool-call.js";
import { toJsonValue } from "../tools/to-json-value.js";
import { backgroundJobSlot } from "./background-tool-call.js";
// The stage sees the driver through its view: run-driver.ts imports the stage.
import type { RunDriverView as RunDriver } from "./run-driver-view.js";
import { transitionToolCall } from "./run-status.js";
import { INTERRUPTED, NOT_EXECUTED, type StagedCall } from "./staged-call.js";

/** A call starts: it counts, `tool.started` is emitted and its clock starts. */
export function start(driver: RunDriver, entry: StagedCall): void {
  const { state } = entry;
  state.status = transitionToolCall(state.status, "running");
  entry.context!.params = state.params;
  if (isBackgroundTool(entry.tool!)) entry.context!.backgroundJob = backgroundJobSlot(driver, state);
  // A call counts once it runs, whatever its outcome; refusals and interruptions never ran.
  driver.ctx.usage.toolCalls++;
  driver.log.emit("tool.started", { toolCallId: state.id, toolId: state.toolId, params: state.params });
  entry.startedAt = performance.now();
}

/** A call's execution ended: `afterInvoke`, the tool's `fallback` for a failure, its outcome, AfterToolExecute. */
export async function settle(
  driver: RunDriver,
  entry: StagedCall,
  result: ToolExecutionResult,
): Promise<void> {
  const { state } = entry;
  const tool = entry.tool!;
  const context = entry.context!;
  entry.durationMs = performance.now() - (entry.startedAt ?? performance.now());
  if (tool.afterInvoke) {
    try {
      await tool.afterInvoke(
        state.params,
        context,
        result.data,
        result.success ? undefined : result.exception,
      );
    } catch (error) {
      // afterInvoke is advisory: its failure never changes the call's outcome, but it is never hidden either.
      getLogger().warn(`afterInvoke of tool '${state.toolId}' failed: ${(error as Error)?.message}`, {
        toolCallId: state.id,
        toolId: state.toolId,
        cause: error,
      });
    }
  }
  let ended = result;
  if (
    !result.success &&
    tool.fallback &&
    !isSuspendToolCall(result.exception) &&
    result.metadata.cancelled !== true
  ) {
    const exception = asToolError(result.exception ?? new Error(result.error ?? "tool failed"), state.toolId);
    const recovered = await tool.fallback(exception, state.params, context);
    // A fallback's value is the call's result, as if the tool had returned it.
    if (recovered !== undefined) ended = { ...result, success: true, data: recovered };
  }
  settleOutcome(driver, entry, ended);
  if (driver.agent.hooks.afterToolExecute.length > 0) {
    await driver.agent.hooks.run("afterToolExecute", driver.hookContext("afterToolExecute", state));
  }
}

/** Record what the execution ended with: a result, a suspension, a cancellation or a failure. */
export function settleOutcome(driver: RunDriver, entry: StagedCall, result: ToolExecutionResult): void {
  const { state } = entry;
  entry.context!.release();
  entry.durationMs ??= performance.now() - (entry.startedAt ?? performance.now());
  const durationMs = entry.durationMs;
  if (result.success) {
    succeed(driver, entry, result.data);
  } else if (isSuspendToolCall(result.exception)) {
    suspend(driver, state, result.exception);
  } else if (result.exception === undefined && isToolResult(result.data)) {
    failWithResult(driver, entry, result.data);
  } else {
    const exception = asToolError(result.exception ?? new Error(result.error ?? "tool failed"), state.toolId);
    if (result.metadata.cancelled === true) {
      fail(driver, state, {
        code: ERROR_CODES.TOOL_CANCELLED,
        message: exception.message,
        durationMs,
        status: "cancelled",
      });
    } else {
      // A sandbox or permission refusal inside the tool names its rule too.
      const rule = (result.exception as { rule?: unknown } | undefined)?.rule;
      const failure: CallFailure = { code: exception.code, message: exception.message, durationMs };
      if (typeof rule === "string") failure.rule = rule;
      fail(driver, state, failure);
    }
  }
}

/** A call succeeded with `output` (its duration is the entry's; a decided or restored call took none). */
export function succeed(driver: RunDriver, entry: StagedCall, output: unknown): void {
  const { state } = entry;
  const durationMs = entry.durationMs ?? 0;
  const json = asJson(driver, entry, output);
  if (json === NOT_JSON) return;
  state.status = transitionToolCall(state.status, "succeeded");
  const data = offloaded(driver, state, json);
  state.result = data;
  driver.ctx.toolResults.push({ toolCallId: state.id, toolId: state.toolId, result: data, success: true });
  driver.log.emit("tool.completed", { toolCallId: state.id, toolId: state.toolId, result: data, durationMs });
  if (driver.runFolder !== undefined) logCall(driver, state, { status: "succeeded", durationMs, data });
}

const NOT_JSON = Symbol("not JSON");

/**
 * A result in its JSON form, checked here once because the transcript, the events and every store hold it as
 * JSON (a BigInt or a cycle would otherwise lose the run's final write on a persistent store only). A result
 * with no JSON form fails the call with a typed error the model sees; the run goes on.
 */
function asJson(driver: RunDriver, entry: StagedCall, output: unknown): unknown | typeof NOT_JSON {
  // Most results are text or a plain scalar: nothing to walk, nothing to allocate.
  if (typeof output === "string" || output === undefined || output === null || typeof output === "boolean") {
    return output;
  }
  if (typeof output === "number" && Number.isFinite(output)) return output;
  const converted = toJsonValue(output);
  if (converted.ok) return converted.value;
  const { state } = entry;
  const { path, reason } = converted.problem;
  const message = `Tool '${state.toolId}' returned a value JSON cannot hold: ${reason} at ${path}`;
  const hint =
    "The call ran but its result cannot be recorded; the tool must return plain data (strings, numbers, " +
    "booleans, null, arrays, objects) without cycles, functions or symbols";
  getLogger().warn(`${message}; the call fails`, { toolCallId: state.id, toolId: state.toolId, path, hint });
  fail(driver, state, {
    code: ERROR_CODES.TOOL_RESULT_NOT_JSON,
    message,
    durationMs: entry.durationMs ?? 0,
    hint,
  });
  return NOT_JSON;
}

/**
 * A large output becomes a run artifact before anything records it: the transcript, the events and the logs see
 * only its reference. Anything within `large_output_bytes` is returned as it is.
 */
function offloaded(driver: RunDriver, state: ToolCallState, output: unknown): unknown {
  // A scalar is never large: no arguments to build for it.
  if (typeof output !== "string" && (typeof output !== "object" || output === null)) return output;
  const large = offloadLargeOutput(
    output,
    { toolCallId: state.id, toolId: state.toolId },
    { limit: driver.largeOutputBytes, folder: driver.runFolder },
  );
  if (large === undefined) return output;
  driver.ctx.artifacts.push(large.artifact);
  driver.log.emit("artifact", {
    name: large.artifact.name,
    kind: large.artifact.kind,
    payload: large.result.artifacts[large.result.artifacts.length - 1],
  });
  return large.result;
}

/**
 * A call whose ToolResult says `ok: false`: failed — `tool.failed` with the result's error code, counted
 * as an error — while the transcript keeps the result itself, so the model sees its summary and data.
 */
function failWithResult(driver: RunDriver, entry: StagedCall, output: ToolResult): void {
  const json = asJson(driver, entry, output);
  if (json === NOT_JSON) return;
  const data = offloaded(driver, entry.state, json) as ToolResult;
  entry.state.result = data;
  const error = data.error ?? { code: ERROR_CODES.TOOL_ERROR, message: data.summary };
  fail(driver, entry.state, {
    code: error.code,
    message: error.message,
    durationMs: entry.durationMs ?? 0,
    result: data,
  });
}

/** A finished call's line in the run folder's `tools.jsonl` (and `errors.jsonl`). */
function logCall(
  driver: RunDriver,
  state: ToolCallState,
  ended: { status: ToolLogLine["status"]; durationMs: number; data: unknown; rule?: string | undefined },
): void {
  const { status, durationMs, data, rule } = ended;
  const line: ToolLogLine = {
    toolCallId: state.id,
    toolId: state.toolId,
    toolset: driver.agent.toolsets?.[state.toolId] ?? null,
    status,
    startedAt: new Date(Date.now() - durationMs).toISOString(),
    durationMs,
    summary: status === "succeeded" ? summarizeValue(data) : summarizeValue(state.error?.message ?? ""),
    artifacts: isToolResult(data) ? data.artifacts : [],
  };
  if (status !== "succeeded") {
    line.error = {
      code: state.error?.code ?? ERROR_CODES.TOOL_ERROR,
      message: state.error?.message ?? "failed",
    };
    if (rule !== undefined) line.error.rule = rule;
  }
  driver.runFolder!.recordTool(line);
}

/** How a call failed: its error, and for the run folder's log its duration, rule and `ok: false` result. */
export interface CallFailure {
  code: string;
  message: string;
  /** Default `failed`; a call the run's cancellation or a decision ended is `cancelled`. */
  status?: "failed" | "cancelled";
  durationMs?: number;
  /** The policy or sandbox rule that refused it. */
  rule?: string;
  /** The tool's own `ok: false` result, which the transcript keeps. */
  result?: ToolResult;
  hint?: string;
}

export function fail(driver: RunDriver, state: ToolCallState, failure: CallFailure): void {
  const { code, message, durationMs, rule, result, hint } = failure;
  const status = failure.status ?? "failed";
  state.status = transitionToolCall(state.status, status);
  state.error = hint === undefined ? { code, message } : { code, message, hint };
  const payload: Record<string, unknown> = {
    toolCallId: state.id,
    toolId: state.toolId,
    error: message,
    code,
  };
  if (rule !== undefined) payload.rule = rule;
  if (durationMs !== undefined) payload.durationMs = durationMs;
  driver.log.emit("tool.failed", payload);
  if (driver.runFolder !== undefined) {
    logCall(driver, state, { status, durationMs: durationMs ?? 0, data: result, rule });
  }
}

/** Why a call waits: what `SuspendToolCall` carries. */
export interface CallSuspension {
  readonly reason?: string | undefined;
  readonly resumeMode: ResumeMode;
  readonly responseSchema?: Record<string, unknown> | undefined;
}

export function suspend(driver: RunDriver, state: ToolCallState, suspension: CallSuspension): void {
  const { reason, resumeMode, responseSchema } = suspension;
  state.status = transitionToolCall(state.status, "suspended");
  state.suspension = { resumeMode };
  if (reason !== undefined) state.suspension.reason = reason;
  if (responseSchema !== undefined) state.suspension.responseSchema = responseSchema;
  const payload: Record<string, unknown> = {
    toolCallId: state.id,
    toolId: state.toolId,
    params: state.params,
    resumeMode,
  };
  if (reason !== undefined) payload.reason = reason;
  driver.log.emit("tool.suspended", payload);
}

/** One tool-result message per finished call, in the order the model issued them. */
export function appendResults(driver: RunDriver, states: readonly ToolCallState[]): void {
  for (const state of states) {
    if (state.status === "suspended") continue;
    const failed = state.status !== "succeeded";
    // A failed call shows its result when it returned one (`ok: false`), else its error.
    const content =
      !failed || state.result !== undefined
        ? formatToolResult(state.result)
        : state.error?.message === INTERRUPTED || state.error?.message === NOT_EXECUTED
          ? state.error.message
          : formatToolError(
              state.error?.code ?? ERROR_CODES.TOOL_ERROR,
              state.error?.message ?? "failed",
              state.error?.hint,
            );
    driver.appendMessage(
      failed
        ? { role: "tool", toolCallId: state.id, toolName: state.toolId, content, isError: true }
        : { role: "tool", toolCallId: state.id, toolName: state.toolId, content },
    );
  }
}

/** What a pattern learns of its calls: each one's id, tool, status and result or error. */
export function toOutcomes(states: ToolCallState[]): ToolCallOutcome[] {
  return states.map(toOutcome);
}

function toOutcome(state: ToolCallState): ToolCallOutcome {
  const outcome: ToolCallOutcome = {
    toolCallId: state.id,
    toolId: state.toolId,
    status:
      state.status === "succeeded" || state.status === "cancelled" || state.status === "suspended"
        ? state.status
        : "failed",
  };
  if (state.result !== undefined) outcome.result = state.result;
  if (state.error !== undefined) outcome.error = state.error;
  return outcome;
}
