import type { RunStatus, StopReason, TerminationReason } from "../contracts/run-types.js";

const STOPPED_REASONS: Readonly<Record<string, StopReason>> = {
  max_rounds: "max_steps",
  max_steps: "max_steps",
  max_tool_calls: "max_steps",
  timeout: "timeout",
  token_budget: "budget_exhausted",
  cost_budget: "budget_exhausted",
  stop_on_tool: "completed",
  content_match: "completed",
  consecutive_errors: "failed",
  loop_detection: "failed",
};

/** The stop reason a termination ends a run with. */
export function stopReasonOf(termination: TerminationReason): StopReason {
  switch (termination.type) {
    case "natural_end":
    case "behavior_requested":
      return "completed";
    case "stopped":
      return STOPPED_REASONS[termination.value] ?? "failed";
    case "cancelled":
      return "cancelled";
    case "blocked":
    case "error":
      return "failed";
    case "suspended":
      return "suspended";
  }
}

/** A suspended run waits; every other termination is done. */
export function runStatusOf(termination: TerminationReason): RunStatus {
  return termination.type === "suspended" ? "waiting" : "done";
}

/** A cancellation, with its reason when one was given. */
export function cancelledBy(reason: string | undefined): TerminationReason {
  return reason === undefined ? { type: "cancelled" } : { type: "cancelled", value: reason };
}
