import type { ToolCallState } from "../contracts/hook.js";
import type { ToolExecutionResult } from "../contracts/tool.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { resumesBackgroundJob } from "./background-tool-call.js";
// The stage sees the driver through its view: run-driver.ts imports the stage.
import type { RunDriverView as RunDriver } from "./run-driver-view.js";
import type { ToolCallRecord } from "./run-state.js";
import { transitionToolCall } from "./run-status.js";
import type { StagedCall } from "./staged-call.js";
import { fail, succeed, suspend } from "./tool-call-outcome.js";

/**
 * A call a checkpoint recorded, in a resumed step. Finished calls keep their outcome and are not run again;
 * a started call of a tool that is not idempotent has an unknown outcome and waits for a decision;
 * anything else (not started, or idempotent) runs normally. Returns whether the call needs nothing more.
 */
export function restorePrior(driver: RunDriver, entry: StagedCall, prior: ToolCallRecord): boolean {
  const { state } = entry;
  switch (prior.status) {
    case "succeeded":
      state.result = prior.result;
      driver.ctx.toolResults.push({
        toolCallId: state.id,
        toolId: state.toolId,
        result: prior.result,
        success: true,
      });
      return true;
    case "failed":
    case "cancelled":
      state.error = prior.error ?? { code: ERROR_CODES.TOOL_ERROR, message: "failed" };
      // A failed call that returned a ToolResult (`ok: false`) shows the model that result again.
      if (prior.result !== undefined) state.result = prior.result;
      return true;
    case "suspended":
      return prior.decision === undefined ? staySuspended(state, prior) : applyDecision(driver, entry, prior);
    case "resuming":
      // Decided but not started when the run checkpointed: the decision applies again.
      if (prior.decision !== undefined) return applyDecision(driver, entry, prior);
      if (resumesBackgroundJob(entry.tool, state, prior)) return false;
      if (entry.tool?.durableIdempotent !== false) return false;
      return outcomeUnknown(driver, entry);
    case "running":
      if (resumesBackgroundJob(entry.tool, state, prior)) return false;
      if (entry.tool?.durableIdempotent !== false) return false;
      return outcomeUnknown(driver, entry);
    case "new":
      return prior.decision === undefined ? false : applyDecision(driver, entry, prior);
  }
}

/** A started call of a tool that is not idempotent, caught by a stop: it waits for a decision. */
function outcomeUnknown(driver: RunDriver, entry: StagedCall): true {
  const { state } = entry;
  driver.log.emit("tool.outcome_unknown", {
    toolCallId: state.id,
    toolId: state.toolId,
    hint: "The run stopped while this call ran; decide whether to run it again, give its result, or deny it",
  });
  suspend(driver, state, {
    reason: `The outcome of '${state.toolId}' is unknown: the run stopped while it ran and the tool is not idempotent`,
    resumeMode: "replay_tool_call",
  });
  return true;
}

/** A suspended call no decision has reached yet: it waits on. */
function staySuspended(state: ToolCallState, prior: ToolCallRecord): true {
  state.suspension = prior.suspension ?? { resumeMode: "replay_tool_call" };
  return true;
}

/**
 * A decided call: deny cancels it with a result saying so; result makes `value` its result; approve
 * replays it in its resume mode — with the original arguments (`replay_tool_call`), with `value` as its result
 * (`use_decision_as_tool_result`), or with `value` as its arguments, validated again (`pass_decision_to_tool`).
 * A replayed call goes through the whole pipeline with `resumeInput` set. Returns whether it needs nothing more.
 */
function applyDecision(driver: RunDriver, entry: StagedCall, prior: ToolCallRecord): boolean {
  const { state } = entry;
  const decision = prior.decision!;
  state.resumeInput = decision;
  // A suspended call goes on through `resuming`; one a checkpoint caught there (or an older checkpoint's `new`
  // call with its decision) is already past it.
  if (state.status === "suspended") state.status = transitionToolCall(state.status, "resuming");
  switch (decision.action) {
    case "deny":
      fail(driver, state, {
        code: ERROR_CODES.TOOL_DENIED,
        message: deniedMessage(decision.reason),
        status: "cancelled",
      });
      return true;
    case "result":
      succeed(driver, entry, decision.value);
      return true;
    case "approve": {
      const mode = prior.suspension?.resumeMode ?? "replay_tool_call";
      if (mode === "use_decision_as_tool_result") {
        succeed(driver, entry, decision.value ?? null);
        return true;
      }
      const value = decision.value;
      if (
        mode === "pass_decision_to_tool" &&
        typeof value === "object" &&
        value !== null &&
        !Array.isArray(value)
      )
        state.params = value as Record<string, unknown>;
      return false;
    }
  }
}

export function deniedMessage(reason: string | undefined): string {
  return `The call was denied${reason ? `: ${reason}` : ""}`;
}

/**
 * A durable run hands a tool's rate limit or unavailability to its resume loop rather than to the model: the
 * call did not happen, and the run resumes from its latest checkpoint and runs it again.
 */
export function isResumableFailure(result: ToolExecutionResult): boolean {
  if (result.success || result.metadata.cancelled === true) return false;
  const code = (result.exception as { code?: unknown } | undefined)?.code;
  return code === ERROR_CODES.TOOL_RATE_LIMIT || code === ERROR_CODES.TOOL_UNAVAILABLE;
}

/** The call did not happen: it goes back to `new` for the checkpoint the resume continues from. */
export function releaseForResume(entry: StagedCall): void {
  entry.context!.release();
  // Not a transition: the start is undone, as if it never happened, for the checkpoint the resume reads.
  entry.state.status = "new";
}
